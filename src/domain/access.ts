/**
 * The one access rule of the service, for API keys, the API called from the dashboard, and
 * dashboard pages and fragments alike: a caller must belong to an organisation whose subscription
 * runs, and `admin` routes need an owner or admin.
 */
import { ForbiddenError } from './errors';
import { isAdminRole, type Role } from './statuses';
import { subscriptionExpired } from './subscription';

/** Which callers a route admits: any member of an organisation, or owners and admins only. */
export type Access = 'member' | 'admin';

/** A signed-in user or the owner of an API key, as read once per request. */
export interface Caller {
  userId: string;
  orgId: string | null;
  role: Role;
  subscriptionExpiresOn: string | null;
  /** The organisation's catalogue version, read with the caller (see CatalogueListings); null without one. */
  catalogueVersion: string | null;
  /** `key`: an API key (purchases get source `api`); `session`: the dashboard (source `manual`). */
  via: 'key' | 'session';
}

/** Who is calling, once admitted. */
export interface Principal {
  userId: string;
  orgId: string;
  role: Role;
  via: Caller['via'];
  catalogueVersion: string | null;
}

/** The caller as a principal of `access`, or a 403 that says why not. */
export function admit(caller: Caller, access: Access, now: Date): Principal {
  if (!caller.orgId) throw new ForbiddenError('this user belongs to no organisation');
  if (subscriptionExpired(caller.subscriptionExpiresOn, now)) throw new ForbiddenError('the organisation\'s subscription has expired');
  if (access === 'admin' && !isAdminRole(caller.role)) throw new ForbiddenError('admin role required: only owners and admins may do this');
  return { userId: caller.userId, orgId: caller.orgId, role: caller.role, via: caller.via, catalogueVersion: caller.catalogueVersion };
}
