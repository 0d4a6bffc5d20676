import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Orm } from '../../db/orm';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * This request's MikroORM EntityManager: forked from the global one on first use, then the
     * same for the rest of the request. No request shares an identity map with another, and no
     * handler forks on its own. (Explicit rather than MikroORM's RequestContext, whose implicit
     * global `orm.em` would make a forgotten context a silent shared identity map.)
     */
    readonly em: EntityManager;
  }
}

export function registerRequestEntityManager(app: FastifyInstance, orm: Orm): void {
  const forks = new WeakMap<FastifyRequest, EntityManager>();
  app.decorateRequest('em', {
    getter(this: FastifyRequest): EntityManager {
      let em = forks.get(this);
      if (!em) {
        em = orm.em.fork();
        forks.set(this, em);
      }
      return em;
    },
  });
}
