import { Type } from 'typebox';
import { ApiError } from '../../platform/errors.ts';
import { PagingQuery, pageOf } from '../../platform/http/schema.ts';
import { route, type RouteDef } from '../../platform/http/router.ts';
import { createCredentialLink, createPartner, extractCredentials, partnerView, updatePartner, SECRET_EXTRACT_PATH, type PartnerDeps } from './service.ts';
import { BatchedLookup } from '../../platform/db/batched-lookup.ts';
import { findPartnerById, findPartnersByIds, listPartners, type Partner } from './store.ts';

const IpList = Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100 });
const Url = Type.String({ format: 'uri', maxLength: 2048, pattern: '^https?://' });

const PartnerFields = {
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
  secureCardIvMode: Type.Union([Type.Literal('SHARED'), Type.Literal('PER_FIELD')], {
    description: 'D27: SHARED uses one iv for the three secure-card fields (as the spec says); PER_FIELD adds cvv2Iv and expireDateIv',
  }),
};

const PartnerView = Type.Object({
  partnerId: Type.String(),
  name: Type.String(),
  apiKey: Type.Union([Type.String(), Type.Null()]),
  pciCertified: Type.Boolean(),
  webhookUrl: Type.Union([Type.String(), Type.Null()]),
  authUrl: Type.Union([Type.String(), Type.Null()]),
  externalPublicKey: Type.Union([Type.String(), Type.Null()]),
  ipWhitelist: Type.Object({ api: IpList, webhook: IpList, auth: IpList, retrieval: IpList }),
  secureCardIvMode: Type.String(),
  status: Type.String(),
  createTime: Type.String(),
  modifyTime: Type.String(),
});

export function partnerRoutes(deps: PartnerDeps): RouteDef[] {
  // The settings read is the hottest partner read; concurrent calls share one statement.
  const partnersById = new BatchedLookup<Partner>((ids) => findPartnersByIds(deps.db, ids), (p) => p.partnerId);
  return [
    route({
      method: 'POST',
      url: '/internal/admin/v1/partners',
      auth: 'admin',
      tag: 'Admin',
      summary: 'Create a partner (D13)',
      description: 'Sandbox answers with apiKey and secretKey; production answers with null credentials, which are issued through a credential link (4.1).',
      body: Type.Object({
        name: PartnerFields.name,
        pciCertified: Type.Optional(PartnerFields.pciCertified),
        webhookUrl: Type.Optional(PartnerFields.webhookUrl),
        authUrl: Type.Optional(PartnerFields.authUrl),
        externalPublicKey: Type.Optional(PartnerFields.externalPublicKey),
        ipWhitelist: Type.Optional(PartnerFields.ipWhitelist),
        secureCardIvMode: Type.Optional(PartnerFields.secureCardIvMode),
      }),
      data: Type.Intersect([PartnerView, Type.Object({ secretKey: Type.Union([Type.String(), Type.Null()]) })]),
      errors: [],
      handler: ({ body }) => createPartner(deps, body),
    }),
    route({
      method: 'POST',
      url: '/internal/admin/v1/partners/update',
      auth: 'admin',
      tag: 'Admin',
      summary: 'Change partner settings (D13); absent fields are kept',
      body: Type.Object({
        partnerId: Type.String({ minLength: 1, maxLength: 20 }),
        name: Type.Optional(PartnerFields.name),
        pciCertified: Type.Optional(PartnerFields.pciCertified),
        webhookUrl: Type.Optional(PartnerFields.webhookUrl),
        authUrl: Type.Optional(PartnerFields.authUrl),
        externalPublicKey: Type.Optional(PartnerFields.externalPublicKey),
        ipWhitelist: Type.Optional(PartnerFields.ipWhitelist),
        secureCardIvMode: Type.Optional(PartnerFields.secureCardIvMode),
        status: Type.Optional(Type.Union([Type.Literal('ACTIVE'), Type.Literal('DISABLED')])),
      }),
      data: PartnerView,
      errors: ['PARTNER_INVALID'],
      handler: ({ body }) => {
        const { partnerId, ...input } = body;
        return updatePartner(deps, partnerId, input);
      },
    }),
    route({
      method: 'GET',
      url: '/internal/admin/v1/partners',
      auth: 'admin',
      tag: 'Admin',
      summary: 'List partners, newest first',
      querystring: Type.Object({ ...PagingQuery }),
      errors: [],
      handler: async ({ query }) => {
        const paging = { page: query.page ?? 1, pageSize: query.pageSize ?? 20 };
        const { total, rows } = await listPartners(deps.db, paging.pageSize, (paging.page - 1) * paging.pageSize);
        return pageOf(paging, total, rows.map(partnerView));
      },
    }),
    route({
      method: 'GET',
      url: '/internal/admin/v1/partners/detail',
      auth: 'admin',
      tag: 'Admin',
      summary: 'Read one partner',
      querystring: Type.Object({ partnerId: Type.String({ minLength: 1, maxLength: 20 }) }),
      data: PartnerView,
      errors: ['PARTNER_INVALID'],
      handler: async ({ query }) => {
        const partner = await findPartnerById(deps.db, query.partnerId);
        if (!partner) throw new ApiError('PARTNER_INVALID');
        return partnerView(partner);
      },
    }),
    route({
      method: 'POST',
      url: '/internal/admin/v1/credential-links',
      auth: 'admin',
      tag: 'Admin',
      summary: 'Create a one-time credential retrieval link and mail it (4.1, D14)',
      body: Type.Object({
        partnerId: Type.String({ minLength: 1, maxLength: 20 }),
        email: Type.String({ format: 'email', maxLength: 128 }),
        retrievalIp: Type.String({ minLength: 1, maxLength: 64 }),
      }),
      data: Type.Object({
        linkId: Type.String(), partnerId: Type.String(), email: Type.String(), retrievalIp: Type.String(),
        expireTime: Type.String(), extractUrl: Type.String(),
      }),
      errors: ['PARTNER_INVALID'],
      handler: ({ body }) => createCredentialLink(deps, body),
    }),
    route({
      method: 'GET',
      url: `${SECRET_EXTRACT_PATH}:extractSecretKey`,
      auth: 'none',
      tag: 'Credentials',
      summary: 'One-time credential retrieval (4.1, D14): GET {extractUrl}{extractSecretKey} from the registered IP',
      data: Type.Object({
        apiKey: Type.String(), secretKey: Type.String(), expireTime: Type.String(), extractSecretKey: Type.String(),
        extractUrl: Type.String(), howToUse: Type.String(), notes: Type.String(),
      }),
      errors: ['SECRET_EXTRACT_INVALID', 'SECRET_EXTRACT_EXPIRED', 'DAPI_IP_NOT_ALLOWED'],
      handler: ({ params, ip }) => extractCredentials(deps, params.extractSecretKey, ip),
    }),
    route({
      method: 'GET',
      url: '/open-api/partner/v1/settings',
      auth: 'partner',
      tag: 'Partner',
      summary: "The calling partner's own settings",
      data: PartnerView,
      errors: [],
      handler: async ({ partner }) => {
        const row = await partnersById.load(partner.partnerId);
        if (!row) throw new ApiError('DAPI_API_KEY_INVALID');
        return partnerView(row);
      },
    }),
  ];
}
