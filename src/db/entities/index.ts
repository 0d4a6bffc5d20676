import { ActivityLogEntry } from './activity-log-entry.entity';
import { Customer } from './customer.entity';
import { DownloadCoverage } from './download-coverage.entity';
import { DownloadToken } from './download-token.entity';
import { IntegrationHealth } from './integration-health.entity';
import { Integration } from './integration.entity';
import { LicenseActivation } from './license-activation.entity';
import { LicenseKey } from './license-key.entity';
import { Organisation } from './organisation.entity';
import { OutboundAttempt } from './outbound-attempt.entity';
import { OutboundDelivery } from './outbound-delivery.entity';
import { OutboundEndpointLease } from './outbound-endpoint-lease.entity';
import { OutboundEvent } from './outbound-event.entity';
import { ProductSku } from './product-sku.entity';
import { ProductVersion } from './product-version.entity';
import { Product } from './product.entity';
import { Purchase } from './purchase.entity';
import { RateLimitCounter } from './rate-limit-counter.entity';
import { RevocationNotice } from './revocation-notice.entity';
import { SentEmail } from './sent-email.entity';
import { SignatureNonce } from './signature-nonce.entity';
import { UnmatchedSku } from './unmatched-sku.entity';
import { User } from './user.entity';
import { UserSession } from './user-session.entity';
import { VersionFile } from './version-file.entity';
import { VersionNotification } from './version-notification.entity';
import { WebhookDeliveryItem } from './webhook-delivery-item.entity';
import { WebhookDelivery } from './webhook-delivery.entity';
import { WebhookEndpoint } from './webhook-endpoint.entity';
import { WorkflowDispatch } from './workflow-dispatch.entity';

export {
  ActivityLogEntry, Customer, DownloadCoverage, DownloadToken, Integration, IntegrationHealth, LicenseActivation, LicenseKey, Organisation, OutboundAttempt, OutboundDelivery, OutboundEndpointLease, OutboundEvent, Product, ProductSku,
  ProductVersion, Purchase, RateLimitCounter, RevocationNotice, SentEmail, SignatureNonce, UnmatchedSku, User, UserSession, VersionFile,
  VersionNotification, WebhookDelivery, WebhookDeliveryItem, WebhookEndpoint, WorkflowDispatch,
};

export const ENTITIES = [
  ActivityLogEntry, Customer, DownloadCoverage, DownloadToken, Integration, IntegrationHealth, LicenseActivation, LicenseKey, Organisation, OutboundAttempt, OutboundDelivery, OutboundEndpointLease, OutboundEvent, Product, ProductSku,
  ProductVersion, Purchase, RateLimitCounter, RevocationNotice, SentEmail, SignatureNonce, UnmatchedSku, User, UserSession, VersionFile,
  VersionNotification, WebhookDelivery, WebhookDeliveryItem, WebhookEndpoint, WorkflowDispatch,
];
