/** The workflowsPath of the worker: every workflow type the service runs. */
export { fulfilOrderLine, orderLineFulfilment } from './order-line-fulfilment';
export { orderAlert } from './order-alert';
export { freshLinks } from './fresh-links';
export { purchaseRevocation } from './purchase-revocation';
export { versionNotification } from './version-notification';
export { deliverOutboundEvent } from './outbound-delivery';
