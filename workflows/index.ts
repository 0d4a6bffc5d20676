/** The workflowsPath of the worker: every workflow type the service runs. */
export { fulfilOrderLine } from './order-line-fulfilment';
/** Legacy, frozen: runs of this type started before 2026-11-27 replay and finish. */
export { orderLineFulfilment } from './order-line-fulfilment-legacy';
export { orderAlert } from './order-alert';
export { freshLinks } from './fresh-links';
export { purchaseRevocation } from './purchase-revocation';
export { versionNotification } from './version-notification';
export { deliverOutboundEvent } from './outbound-delivery';
export { buyerReminder } from './buyer-reminder';
export { reconcileIntegration } from './reconcile';
