/**
 * THE error catalog: every code the service can answer with, its HTTP status (D2) and a default
 * message. Codes come from spec section 7 and the decisions (D5, D14, "Errors added by these
 * decisions"). A test checks that every code used in src/ is here and that every code of the
 * spec and decisions is here.
 */
export const ERROR_CATALOG = {
  SYS_SUCCESS: { httpStatus: 200, message: 'Success' },
  // Framework and platform (D2, D3).
  SYS_ILLEGAL_PARAM: { httpStatus: 400, message: 'Illegal request' },
  SYS_NOT_FOUND: { httpStatus: 404, message: 'No such path' },
  SYS_RATE_LIMITED: { httpStatus: 429, message: 'Too many requests; retry after the interval in Retry-After' },
  SYS_INTERNAL_ERROR: { httpStatus: 500, message: 'Internal error' },
  SYS_UNAUTHORIZED: { httpStatus: 401, message: 'Missing or wrong admin bearer token' },
  // Operators (issue 29): a valid operator whose role does not allow the action, or a missing or
  // wrong CSRF token on a change made with a console session.
  SYS_FORBIDDEN: { httpStatus: 403, message: 'Your operator role does not allow this action' },
  // Issue 28: the database is unreachable (down, restarting or failing over). Almost always nothing was
  // booked; when the connection broke during the commit it may have been, so the retry names the same id.
  SYS_UNAVAILABLE: { httpStatus: 503, message: 'Service temporarily unavailable; retry after the interval in Retry-After with the same Idempotency-Key or id' },
  // Authentication (D5): 401 except the IP whitelist (403).
  DAPI_API_KEY_INVALID: { httpStatus: 401, message: 'Missing or unknown API key' },
  DAPI_SIGN_INVALID: { httpStatus: 401, message: 'Missing or wrong signature' },
  DAPI_NONCE_INVALID: { httpStatus: 401, message: 'Nonce must be an integer in [10000, 99999]' },
  DAPI_NONCE_REPLAYED: { httpStatus: 401, message: 'A request with this API key, timestamp and nonce was already accepted' },
  DAPI_TIMESTAMP_FORMAT_ERROR: { httpStatus: 401, message: 'Timestamp must be 13-digit Unix epoch milliseconds' },
  DAPI_TIMESTAMP_EXPIRED: { httpStatus: 401, message: 'Timestamp outside the accepted window' },
  DAPI_IP_NOT_ALLOWED: { httpStatus: 403, message: 'Caller address is not on the whitelist' },
  // Business codes (section 7 and decisions): HTTP 200, the code is the only success criterion.
  DAPI_PARAM_INVALID: { httpStatus: 200, message: 'Invalid parameter' },
  SECRET_EXTRACT_INVALID: { httpStatus: 200, message: 'Retrieval link is invalid or already used' },
  SECRET_EXTRACT_EXPIRED: { httpStatus: 200, message: 'Retrieval link has expired' },
  PARTNER_INVALID: { httpStatus: 200, message: 'Partner does not exist' },
  MAIL_TRANSPORT_REQUIRED: { httpStatus: 200, message: 'Credential links are sent only by email: configure SMTP_URL (production)' },
  APPLY_NOT_FOUND: { httpStatus: 200, message: 'Card application not found' },
  CARD_INVALID: { httpStatus: 200, message: 'Card does not exist or is not active' },
  PCI_NOT_CERTIFIED: { httpStatus: 200, message: 'Partner is not on the PCI allowlist' },
  CARD_NOT_DEDICATED: { httpStatus: 200, message: 'Card is not a dedicated-balance card' },
  UNSUPPORTED_CURRENCY: { httpStatus: 200, message: 'Unsupported currency' },
  CURRENCY_NOT_ALLOWED: { httpStatus: 200, message: 'Currency not allowed' },
  SUBJECT_INVALID: { httpStatus: 200, message: 'Subject is missing or invalid' },
  SUBJECT_TYPE_NOT_ALLOWED: { httpStatus: 200, message: 'Subject type not allowed' },
  CUSTOMER_INVALID: { httpStatus: 200, message: 'Employee does not exist or is not in a valid state' },
  KYC_IN_REVIEW: { httpStatus: 200, message: 'A KYC review is in progress' },
  KYC_NOT_APPROVED: { httpStatus: 200, message: 'Employee KYC is not approved' },
  COUNTRY_SANCTIONED: { httpStatus: 200, message: 'Country is sanctioned' },
  STATUS_CONFLICT: { httpStatus: 200, message: 'Subject is not ACTIVE' },
  ORGANIZATION_INVALID: { httpStatus: 200, message: 'Organization does not exist' },
  ORGANIZATION_REF_DUPLICATE: { httpStatus: 200, message: 'organizationRef already used' },
  CUSTOMER_REF_DUPLICATE: { httpStatus: 200, message: 'customerRef already used in this organization' },
  BALANCE_ALERT_CURRENCY_NO_POOL: { httpStatus: 200, message: 'The company has no funding pool in this currency' },
  CARD_APPLY_REF_DUPLICATE: { httpStatus: 200, message: 'cardApplyRef already used' },
  CARD_PROFILE_INVALID: { httpStatus: 200, message: 'Card profile does not exist or is not active' },
  VELOCITY_RULE_NOT_FOUND: { httpStatus: 200, message: 'Velocity rule not found' },
  VELOCITY_RULE_VERSION_CONFLICT: { httpStatus: 200, message: 'ruleVersion does not match; re-query and retry' },
  VELOCITY_RULE_STATUS_INVALID: { httpStatus: 200, message: 'Rule status forbids this change' },
  VELOCITY_RULE_CURRENCY_MISMATCH: { httpStatus: 200, message: 'Rule shares no currency with the card settlement currencies' },
  VELOCITY_RULE_REF_DUPLICATE: { httpStatus: 200, message: 'ruleRef already used in this organization' },
  VELOCITY_BACKTEST_NOT_FOUND: { httpStatus: 200, message: 'Backtest not found' },
  INSUFFICIENT_BALANCE: { httpStatus: 200, message: 'Insufficient balance' },
  EXTERNAL_TRAN_ID_DUPLICATE: { httpStatus: 200, message: 'externalTranId already used' },
  VERIFICATION_CODE_INVALID: { httpStatus: 200, message: 'Verification code is wrong, expired or used' },
  VERIFICATION_CODE_TOO_FREQUENT: { httpStatus: 200, message: 'A verification code was sent for this card too recently' },
  CAPABILITY_FROZEN: { httpStatus: 200, message: 'Capability is frozen' },
  EVENT_NOT_FOUND: { httpStatus: 200, message: 'Event not found' },
  // Authorization engine (issue 10): settlement messages naming a transaction.
  TRANSACTION_NOT_FOUND: { httpStatus: 200, message: 'Transaction not found' },
  TRANSACTION_STATUS_INVALID: { httpStatus: 200, message: 'The transaction\'s status forbids this message' },
  TRANSACTION_AMOUNT_INVALID: { httpStatus: 200, message: 'Amount exceeds what the authorization still holds' },
  // Idempotency-Key (issue 14): another request body under a used key; a copy still executing.
  IDEMPOTENCY_KEY_REUSED: { httpStatus: 200, message: 'This Idempotency-Key was used with another request (method, path or body) in the last 24 hours' },
  IDEMPOTENCY_KEY_IN_USE: { httpStatus: 409, message: 'A request with this Idempotency-Key is still being executed; retry shortly' },
  // Webhook test send (issue 14).
  WEBHOOK_NOT_CONFIGURED: { httpStatus: 200, message: 'No webhook_url is configured for this partner' },
  // Sample events on demand (issue 31): an event type the service does not send, or not in this environment.
  WEBHOOK_EVENT_TYPE_INVALID: { httpStatus: 200, message: 'Unknown event type, or one not sent in this environment' },
  // Managed-balance model (issue 11).
  ASSET_INVALID: { httpStatus: 200, message: 'Asset is not supported' },
  CONVERSION_NOT_AVAILABLE: { httpStatus: 200, message: 'No conversion rate is set between these assets' },
  // Physical card upgrades (issue 30, D52).
  CARD_UPGRADE_REF_DUPLICATE: { httpStatus: 200, message: 'upgradeRef already used' },
  CARD_UPGRADE_IN_PROGRESS: { httpStatus: 200, message: 'The card already has an open physical card upgrade' },
  CARD_UPGRADE_NOT_FOUND: { httpStatus: 200, message: 'Physical card upgrade not found' },
  CARD_UPGRADE_STATUS_INVALID: { httpStatus: 200, message: 'The upgrade\'s status forbids this change' },
  CARD_ACTIVATION_CODE_INVALID: { httpStatus: 200, message: 'The activation code is wrong' },
  CARD_ACTIVATION_LOCKED: { httpStatus: 200, message: 'Activation is locked after 5 wrong codes; an operator must unlock it' },
} as const satisfies Record<string, { httpStatus: number; message: string }>;

export type ErrorCode = Exclude<keyof typeof ERROR_CATALOG, 'SYS_SUCCESS'>;

export interface ErrorData {
  errorCode?: string;
  errorMsg?: string;
}

/** An expected failure: answered with its code, never logged as a crash. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly httpStatus: number;
  readonly data: ErrorData | null;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message?: string, options: { data?: ErrorData; headers?: Record<string, string> } = {}) {
    super(message ?? ERROR_CATALOG[code].message);
    this.name = 'ApiError';
    this.code = code;
    this.httpStatus = ERROR_CATALOG[code].httpStatus;
    this.data = options.data ?? null;
    this.headers = options.headers ?? {};
  }
}

/** D10: a bound or format violation names the field. */
export function paramInvalid(field: string, reason: string): ApiError {
  return new ApiError('DAPI_PARAM_INVALID', `Invalid parameter ${field}: ${reason}`);
}

/** A broken invariant: a bug to surface loudly, never an expected failure. */
export function invariant(condition: unknown, what: string): asserts condition {
  if (!condition) throw new Error(`Invariant violated: ${what}`);
}
