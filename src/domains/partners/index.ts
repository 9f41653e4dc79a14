/**
 * Partners: partner settings, credentials and their retrieval links (4.1, D13, D14), and the
 * authentication of signed requests (5.2-5.4, D5-D7). The public entry of the domain: other domains
 * and the top level import only from here.
 */
export { partnerRoutes } from './routes.ts';
export { newReplayGuard, PartnerAuthenticator, PartnerCache, type ReplayGuard, partnerSecretContext, revealPartnerSecret, type SignedRequest } from './authenticate.ts';
export {
  createCredentialLink, createPartner, extractCredentials, partnerExists, partnersByIds, partnerView, sweepReplayStore, updatePartner,
  SECRET_EXTRACT_PATH, type PartnerDeps, type PartnerInput,
  revealWebhookSecret, rotateWebhookSecret, webhookSecretStatus, webhookSecretsOf, WEBHOOK_SECRET_DEFAULT_OVERLAP_S,
} from './service.ts';
export type { IpWhitelist, Partner, SecureCardIvMode } from './store.ts';
