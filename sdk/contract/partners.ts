import { Type } from 'typebox';
import { PagingQuery } from './wire.ts';

/** Partner settings (D13), credentials (4.1, D14) and the partner's own settings read. */

const IpList = Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100 });
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
    webhook: Type.Optional(IpList),
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
  ipWhitelist: Type.Object({ api: IpList, webhook: IpList, auth: IpList, retrieval: IpList }),
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

/** Issue 31: the partner's own time zone setting. */
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
