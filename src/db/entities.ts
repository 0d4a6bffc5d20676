import { ActivityLogEntry } from '../purchases/activity-log-entry.entity';
import { Customer } from '../purchases/customer.entity';
import { DownloadCoverage } from '../downloads/download-coverage.entity';
import { DownloadToken } from '../purchases/download-token.entity';
import { IntegrationHealth } from '../accounts/integration-health.entity';
import { Integration } from '../accounts/integration.entity';
import { IntegrationReconciliation } from '../accounts/integration-reconciliation.entity';
import { LicenseActivation } from '../licenses/license-activation.entity';
import { LicenseKey } from '../licenses/license-key.entity';
import { Organisation } from '../accounts/organisation.entity';
import { OutboundAttempt } from '../events/outbound-attempt.entity';
import { OutboundDelivery } from '../events/outbound-delivery.entity';
import { OutboundEndpointLease } from '../events/outbound-endpoint-lease.entity';
import { OutboundEvent } from '../events/outbound-event.entity';
import { ProductSku } from '../catalogue/product-sku.entity';
import { ProductVersion } from '../catalogue/product-version.entity';
import { Product } from '../catalogue/product.entity';
import { Purchase } from '../purchases/purchase-store';
import { RateLimitCounter } from '../accounts/rate-limit-counter.entity';
import { RevocationNotice } from '../purchases/revocation-notice.entity';
import { SentEmail } from '../deliveries/sent-email.entity';
import { StampedCopy } from '../downloads/stamped-copy.entity';
import { SignatureNonce } from '../deliveries/signature-nonce.entity';
import { UnmatchedSku } from '../deliveries/unmatched-sku.entity';
import { User } from '../accounts/user.entity';
import { UserSession } from '../accounts/user-session.entity';
import { VersionFile } from '../catalogue/version-file.entity';
import { VersionNotification } from '../catalogue/version-notification.entity';
import { WebhookDeliveryItem } from '../deliveries/webhook-delivery-item.entity';
import { WebhookDelivery } from '../deliveries/webhook-delivery.entity';
import { WebhookEndpoint } from '../events/webhook-endpoint.entity';
import { WorkflowDispatch } from '../outbox/workflow-dispatch.entity';

export {
  ActivityLogEntry, Customer, DownloadCoverage, DownloadToken, Integration, IntegrationHealth, IntegrationReconciliation, LicenseActivation, LicenseKey, Organisation, OutboundAttempt, OutboundDelivery, OutboundEndpointLease, OutboundEvent, Product, ProductSku,
  ProductVersion, Purchase, RateLimitCounter, RevocationNotice, SentEmail, SignatureNonce, StampedCopy, UnmatchedSku, User, UserSession, VersionFile,
  VersionNotification, WebhookDelivery, WebhookDeliveryItem, WebhookEndpoint, WorkflowDispatch,
};

export const ENTITIES = [
  ActivityLogEntry, Customer, DownloadCoverage, DownloadToken, Integration, IntegrationHealth, IntegrationReconciliation, LicenseActivation, LicenseKey, Organisation, OutboundAttempt, OutboundDelivery, OutboundEndpointLease, OutboundEvent, Product, ProductSku,
  ProductVersion, Purchase, RateLimitCounter, RevocationNotice, SentEmail, SignatureNonce, StampedCopy, UnmatchedSku, User, UserSession, VersionFile,
  VersionNotification, WebhookDelivery, WebhookDeliveryItem, WebhookEndpoint, WorkflowDispatch,
];
