import { SignedHttpClient, type ClientOptions } from './client.ts';
import { PartnerResource } from './resources/partner.ts';
import { SandboxResource } from './resources/sandbox.ts';
import { EventsResource } from './resources/events.ts';
import { VelocityResource } from './resources/velocity.ts';
import { CardsResource } from './resources/cards.ts';
import { OrganizationsResource } from './resources/organizations.ts';
import { CustomersResource } from './resources/customers.ts';
import { FundingResource } from './resources/funding.ts';
import { TransactionsResource } from './resources/transactions.ts';
import { UserAssetsResource } from './resources/user-assets.ts';
import { ConsumerCardsResource } from './resources/consumer-cards.ts';
import { QrPaymentsResource } from './resources/qr-payments.ts';
export type { QrPayment, QrTransactionsParams } from './resources/qr-payments.ts';
export type { SimulateQrPaymentParams } from './resources/sandbox.ts';
export type { PushMessage, SubscribeOptions, Subscription } from './resources/push.ts';
import { PushResource } from './resources/push.ts';

export * from './client.ts';
export * from './admin.ts';
export type { PartnerSettings } from './resources/partner.ts';
export type {
  Organization, CreateOrganizationParams, Restriction, RestrictionCode, RestrictionSource, SubjectStatus, FundingCurrency, Page,
  UpdateRestrictionsParams, ListOrganizationsParams,
} from './resources/organizations.ts';
export type {
  Customer, CreateCustomerParams, Address, KycStatus, NameParams, PhoneParams, ListCustomersParams, CustomerRestrictions,
} from './resources/customers.ts';
export type { DepositParams, Deposit, KycDecisionParams, KycDecisionResult, SimulateExpiryParams, SignatureCheckParams, SignatureCheck } from './resources/sandbox.ts';
export type {
  CardUpgrade, CardUpgradeStatus, UpgradePhysicalParams, ActivatePhysicalParams, ConsumerUpgradePhysicalParams, ConsumerActivatePhysicalParams,
  CardShipmentParams, CardShipmentResult,
} from './resources/card-upgrades.ts';
export type {
  FundBalance, PoolBalance, StatementLine, StatementParams, BalanceSetting, BalanceAlertParams, BalanceAlertConfig, FundAmount,
} from './resources/funding.ts';
export type {
  Card, CardApplication, CardProfile, CardPage, ApplyCardParams, ListCardsParams, DepositAccount, TransferParams, Transfer,
  CardStatus, CardApplyStatus, CardSubjectType, CardNetwork, CardForm, BalanceMode, BalanceAmounts, CardAmount, ListProfilesParams,
} from './resources/cards.ts';
export type {
  CardTransaction, TransactionStatus, MessageType, Channel, ListTransactionsParams, ResolvedTransactionId, TransactionAmount,
} from './resources/transactions.ts';
export { createAuthUrlHandler, rsaDecryptSegmented, rsaEncryptSegmented, AuthUrlRequestError } from './auth-url.ts';
export type { AuthorizationRequest, AuthorizationAnswer, AuthUrlHandlerOptions } from './auth-url.ts';
export { decryptSecureCard, decryptGcmField, SecureCardDecryptError } from './secure-card.ts';
export type { EncryptedSecureCard, DecryptedSecureCard } from './secure-card.ts';
export { verifyWebhook, WebhookVerificationError } from './resources/events.ts';
export type { EventRecord, EventStatus, DeliveryAttempt, ListEventsParams, SampleEventType, WebhookEvent, VerifyWebhookInput } from './resources/events.ts';
export type {
  VelocityRule, VelocityRuleSummary, VelocityPage, CreateRuleParams, UpdateRuleParams, RuleStatusChange, BindParams, BindingChange,
  RuleBinding, SubjectRule, Quota, QuotaGroup, CurrencyQuota, AmountQuota, CountQuota, VelocityAmount, PeriodWindow,
  Backtest, BacktestParams, BacktestResult,
} from './resources/velocity.ts';

/**
 * The partner client: one resource per business domain, each method one route (see sdk/README.md).
 * @example
 * const client = new CardServiceClient({ baseUrl, apiKey, secretKey });
 * const settings = await client.partner.settings();
 */
export type {
  CreditParams, DebitParams, ConvertParams, AssetMovement, UserBalance, MovementListParams, AssetInfo,
} from './resources/user-assets.ts';
export type {
  ConsumerApplyParams, ConsumerApplyResult, ConsumerBlockParams, ConsumerCard, ConsumerCardTransaction, ConsumerListParams, FiatTransactionsParams,
  SendCodeParams, ConsumerListProfilesParams,
} from './resources/consumer-cards.ts';

export class CardServiceClient {
  readonly http: SignedHttpClient;
  readonly partner: PartnerResource;
  readonly sandbox: SandboxResource;
  readonly events: EventsResource;
  readonly velocity: VelocityResource;
  readonly cards: CardsResource;
  readonly organizations: OrganizationsResource;
  readonly customers: CustomersResource;
  readonly funding: FundingResource;
  readonly transactions: TransactionsResource;
  readonly userAssets: UserAssetsResource;
  readonly consumerCards: ConsumerCardsResource;
  readonly qrPayments: QrPaymentsResource;
  readonly push: PushResource;

  constructor(options: ClientOptions) {
    this.http = new SignedHttpClient(options);
    this.partner = new PartnerResource(this.http);
    this.sandbox = new SandboxResource(this.http);
    this.events = new EventsResource(this.http);
    this.velocity = new VelocityResource(this.http);
    this.cards = new CardsResource(this.http);
    this.organizations = new OrganizationsResource(this.http);
    this.customers = new CustomersResource(this.http);
    this.funding = new FundingResource(this.http);
    this.transactions = new TransactionsResource(this.http);
    this.userAssets = new UserAssetsResource(this.http);
    this.consumerCards = new ConsumerCardsResource(this.http);
    this.qrPayments = new QrPaymentsResource(this.http);
    this.push = new PushResource(this.http);
  }
}
