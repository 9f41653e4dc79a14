/**
 * Partners: partner settings, credentials and their retrieval links (4.1, D13, D14), and the
 * authentication of signed requests (5.2-5.4, D5-D7). The public entry of the domain: other domains
 * and the top level import only from here.
 */
export { partnerRoutes } from './routes.ts';
export { authenticatedRow, newReplayGuard, throwUnlessNew, PartnerAuthenticator, PartnerCache, type ReplayGuard, revealPartnerSecret } from './authenticate.ts';
export {
  partnerExists, partnersByIds, partnerView, sweepReplayStore, revealWebhookSecret, rotateWebhookSecret, webhookSecretStatus,
  webhookTargetsOf, WEBHOOK_SECRET_DEFAULT_OVERLAP_S, type WebhookTarget,
} from './service.ts';
