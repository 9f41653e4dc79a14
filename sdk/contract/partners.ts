import { Type } from 'typebox';
import { IsoTime, Literals, Nullable, PagingQuery } from './wire.ts';

/** Partner settings (D13), credentials (4.1, D14) and the partner's own settings read. */

const IpList = Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100 });
/** The webhook list restricts the address actually dialled for webhookUrl, like the auth list for authUrl. */
const WebhookIpList = Type.Array(Type.String({ maxLength: 64 }), {
  maxItems: 100,
  description: 'Addresses or CIDR blocks webhooks may be delivered to: the address actually dialled for webhookUrl must be on it. '
    + 'Empty: any address in sandbox, none in production. An attempt to another address is not sent (BLOCKED, retried, the event\'s lastError says why)',
});
const Url = Type.String({ format: 'uri', maxLength: 2048, pattern: '^https?://' });
const PartnerIdParam = Type.String({ minLength: 1, maxLength: 20 });

export const PartnerStatus = Type.Union([Type.Literal('ACTIVE'), Type.Literal('DISABLED')]);
export const SecureCardIvMode = Type.Union([Type.Literal('SHARED'), Type.Literal('PER_FIELD')], {
  description: 'SHARED uses one iv for the three secure-card fields (the original format); PER_FIELD adds cvv2Iv and expireDateIv',
});

export const PartnerFields = {
  name: Type.String({ minLength: 1, maxLength: 128 }),
  pciCertified: Type.Boolean(),
  webhookUrl: Type.Union([Url, Type.Null()]),
  authUrl: Type.Union([Url, Type.Null()]),
  externalPublicKey: Type.Union([Type.String({ maxLength: 4096, pattern: '^[A-Za-z0-9+/]+={0,2}$' }), Type.Null()]),
  ipWhitelist: Type.Object({
    api: Type.Optional(IpList),
    webhook: Type.Optional(WebhookIpList),
    auth: Type.Optional(IpList),
    retrieval: Type.Optional(IpList),
  }),
  secureCardIvMode: SecureCardIvMode,
  timeZone: Type.String({
    minLength: 1, maxLength: 64,
    description: 'IANA time zone of velocity periods (daily, monthly, quarterly, yearly): a change takes effect at each period\'s next boundary',
    examples: ['Asia/Hong_Kong'],
  }),
};

export const PartnerView = Type.Object({
  partnerId: Type.String(),
  name: Type.String(),
  apiKey: Type.Union([Type.String(), Type.Null()]),
  pciCertified: Type.Boolean(),
  webhookUrl: Type.Union([Type.String(), Type.Null()]),
  authUrl: Type.Union([Type.String(), Type.Null()]),
  externalPublicKey: Type.Union([Type.String(), Type.Null()]),
  ipWhitelist: Type.Object({ api: IpList, webhook: WebhookIpList, auth: IpList, retrieval: IpList }),
  secureCardIvMode: SecureCardIvMode,
  timeZone: Type.String({ description: 'IANA time zone of velocity periods; UTC by default' }),
  status: PartnerStatus,
  createTime: Type.String(),
  modifyTime: Type.String(),
});

/** Settings a create or an update may carry; absent ones take the default (create) or are kept (update). */
const OptionalSettings = {
  pciCertified: Type.Optional(PartnerFields.pciCertified),
  webhookUrl: Type.Optional(PartnerFields.webhookUrl),
  authUrl: Type.Optional(PartnerFields.authUrl),
  externalPublicKey: Type.Optional(PartnerFields.externalPublicKey),
  ipWhitelist: Type.Optional(PartnerFields.ipWhitelist),
  secureCardIvMode: Type.Optional(PartnerFields.secureCardIvMode),
  timeZone: Type.Optional(PartnerFields.timeZone),
};

export const CreatePartnerBody = Type.Object({ name: PartnerFields.name, ...OptionalSettings });

/** Sandbox answers with apiKey and secretKey; production with null credentials (4.1). */
export const CreatedPartner = Type.Intersect([PartnerView, Type.Object({ secretKey: Type.Union([Type.String(), Type.Null()]) })]);

export const UpdatePartnerBody = Type.Object({
  partnerId: PartnerIdParam,
  name: Type.Optional(PartnerFields.name),
  ...OptionalSettings,
  status: Type.Optional(PartnerStatus),
});

/** The partner's own time zone setting (issue 31). */
export const SetTimeZoneBody = Type.Object({ timeZone: PartnerFields.timeZone });

export const ListPartnersQuery = Type.Object({ ...PagingQuery });
export const PartnerDetailQuery = Type.Object({ partnerId: PartnerIdParam });

export const CredentialLinkBody = Type.Object({
  partnerId: PartnerIdParam,
  email: Type.String({ format: 'email', maxLength: 128 }),
  retrievalIp: Type.String({ minLength: 1, maxLength: 64 }),
});

export const CredentialLink = Type.Object({
  linkId: Type.String(), partnerId: Type.String(), email: Type.String(), retrievalIp: Type.String(),
  expireTime: Type.String(), extractUrl: Type.String(),
});

export const ExtractedCredentials = Type.Object({
  apiKey: Type.String(), secretKey: Type.String(), expireTime: Type.String(), extractSecretKey: Type.String(),
  extractUrl: Type.String(), howToUse: Type.String(), notes: Type.String(),
});

// ---- signature self-check (issue 31, sandbox only) ----

/** What you signed, exactly as you signed it: the four signed values and the payload (5.2, 5.3). */
export const SignatureCheckBody = Type.Object({
  apiKey: Type.String({ maxLength: 256, description: 'The X-DAPI-API-KEY value you sent' }),
  timestamp: Type.String({ maxLength: 64, description: 'The X-DAPI-TIMESTAMP value you sent (13-digit epoch milliseconds)' }),
  nonce: Type.String({ maxLength: 64, description: 'The X-DAPI-NONCE value you sent' }),
  method: Literals(['GET', 'POST'], { description: 'The method of the request you signed' }),
  payload: Type.String({
    maxLength: 65_536, 'x-raw-text': true,
    description: 'What you signed after the nonce: for GET the query string exactly as in the request target after "?" (empty when none), '
      + 'for POST the body text exactly as sent (whitespace, key order and escapes included). Any character but lone surrogates; signed as UTF-8.',
  }),
  signature: Type.String({ maxLength: 512, description: 'The X-DAPI-SIGN value you sent' }),
});

const Length = Type.Integer({ minimum: 0, description: 'Length in UTF-8 bytes' });
const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$', description: 'Lowercase hex SHA-256 of the UTF-8 bytes (not an HMAC: it needs no secret)' });

/**
 * The service's answer, step by step in the order it authenticates (D5). It never contains the
 * expected signature nor anything derived from the secret key other than whether yours matches.
 */
export const SignatureCheckReport = Type.Object({
  serverTime: IsoTime,
  serverTimeMs: Type.Integer({ description: 'The service clock in epoch milliseconds: compare with your timestamp' }),
  verdict: Type.String({
    description: 'SYS_SUCCESS when a request carrying these values, sent now from this address, would pass authentication (its nonce not used yet); '
      + 'otherwise the code it would be refused with: the first failing check, in the order API key, IP whitelist, timestamp format, timestamp window, '
      + 'nonce format, signature, replay',
  }),
  apiKey: Type.Object({
    formatOk: Type.Boolean({ description: '32 lowercase hexadecimal characters' }),
    known: Type.Boolean({ description: 'An active partner holds this key' }),
  }),
  ipAddress: Type.Object({
    address: Type.String({ description: 'Your address as the service sees it' }),
    allowed: Nullable(Type.Boolean({ description: 'On the key\'s API whitelist (null when the key is unknown)' })),
  }),
  timestamp: Type.Object({
    value: Type.String(),
    formatOk: Type.Boolean({ description: '13 digits: epoch milliseconds' }),
    withinWindow: Type.Boolean(),
    skewMs: Nullable(Type.Integer({ description: 'Your timestamp minus the service clock: positive when your clock is ahead' })),
    windowMs: Type.Integer({ description: 'Accepted distance between the two' }),
  }),
  nonce: Type.Object({
    value: Type.String(),
    valid: Type.Boolean(),
    rule: Type.String(),
    alreadyUsed: Nullable(Type.Boolean({
      description: 'A request with this apiKey, timestamp and nonce was already accepted (null when the key is unknown or a value is malformed). '
        + 'This check never uses the nonce up',
    })),
  }),
  stringToSign: Type.Object({
    rule: Type.String(),
    length: Length,
    sha256: Sha256,
    parts: Type.Object({
      apiKey: Type.Object({ length: Length }),
      timestamp: Type.Object({ length: Length }),
      nonce: Type.Object({ length: Length }),
      payload: Type.Object({ length: Length, sha256: Sha256 }),
    }, { description: 'Each part of the string to sign: find the one that differs from yours' }),
  }, { description: 'apiKey + timestamp + nonce + payload as the service builds it from your values: compare its length and SHA-256 with your own' }),
  signature: Type.Object({
    formatOk: Type.Boolean({ description: '64 lowercase hexadecimal characters' }),
    matches: Type.Boolean({ description: 'Equals the HMAC of the string to sign under the key\'s secret (false for an unknown key)' }),
  }),
  hints: Type.Array(Type.String(), { description: 'Likely mistakes seen in your values, most likely first' }),
});
