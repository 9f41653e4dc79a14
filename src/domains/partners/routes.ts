import { ApiError } from '../../platform/errors.ts';
import { pageOf } from '../../platform/http/schema.ts';
import {
  CreatedPartner, CreatePartnerBody, CredentialLink, CredentialLinkBody, ExtractedCredentials, ListPartnersQuery, PartnerDetailQuery, PartnerView,
  SetTimeZoneBody, SignatureCheckBody, SignatureCheckReport, UpdatePartnerBody,
} from '../../../sdk/contract/partners.ts';
import { route, type RouteDef } from '../../platform/http/router.ts';
import {
  createCredentialLink, createPartner, extractCredentials, partnerView, setOwnTimeZone, updatePartner, SECRET_EXTRACT_PATH, type PartnerDeps,
} from './service.ts';
import { BatchedLookup } from '../../platform/db/batched-lookup.ts';
import { checkSignature } from './signature-check.ts';
import { authenticatedRow } from './authenticate.ts';
import { findPartnerById, findPartnersByIds, listPartners, type Partner } from './store.ts';

export function partnerRoutes(deps: PartnerDeps): RouteDef[] {
  // The settings read is the hottest partner read; concurrent calls share one statement.
  const partnersById = new BatchedLookup<Partner>((ids) => findPartnersByIds(deps.db, ids), (p) => p.partnerId);
  // Issue 34: the view of a cached row is made once per row (the row is frozen; a change is a new row).
  const settingsViews = new WeakMap<Partner, ReturnType<typeof partnerView>>();
  const settingsView = (row: Partner) => {
    let view = settingsViews.get(row);
    if (view === undefined) settingsViews.set(row, view = Object.freeze(partnerView(row)));
    return view;
  };
  return [
    route({
      method: 'POST',
      url: '/internal/admin/v1/partners',
      auth: 'admin',
      tag: 'Admin',
      summary: 'Create a partner',
      description: 'Sandbox answers with apiKey and secretKey; production answers with null credentials, which are issued through a credential link.',
      body: CreatePartnerBody,
      data: CreatedPartner,
      errors: [],
      handler: ({ body }) => createPartner(deps, body),
    }),
    route({
      method: 'POST',
      url: '/internal/admin/v1/partners/update',
      auth: 'admin',
      tag: 'Admin',
      summary: 'Change partner settings; absent fields are kept',
      body: UpdatePartnerBody,
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
      auth: 'admin', role: 'viewer',
      tag: 'Admin',
      summary: 'List partners, newest first',
      querystring: ListPartnersQuery,
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
      auth: 'admin', role: 'viewer',
      tag: 'Admin',
      summary: 'Read one partner',
      querystring: PartnerDetailQuery,
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
      summary: 'Create a one-time credential retrieval link and mail it',
      body: CredentialLinkBody,
      data: CredentialLink,
      errors: ['PARTNER_INVALID', 'MAIL_TRANSPORT_REQUIRED'],
      handler: ({ body }) => createCredentialLink(deps, body),
    }),
    route({
      method: 'GET',
      url: `${SECRET_EXTRACT_PATH}:extractSecretKey`,
      auth: 'none',
      tag: 'Credentials',
      summary: 'One-time credential retrieval: GET {extractUrl}{extractSecretKey} from the registered IP',
      data: ExtractedCredentials,
      errors: ['SECRET_EXTRACT_INVALID', 'SECRET_EXTRACT_EXPIRED', 'DAPI_IP_NOT_ALLOWED'],
      handler: ({ params, ip }) => extractCredentials(deps, params.extractSecretKey, ip),
    }),
    route({
      method: 'POST',
      url: '/open-api/sandbox/v1/signature-check',
      auth: 'none',
      sandboxOnly: true,
      countsAsFailedAuthentication: true,
      tag: 'Sandbox',
      summary: 'Check a signature you made, step by step (unsigned; never reveals the right signature)',
      description: 'Send the values of a request you signed: apiKey, timestamp, nonce, method, payload and signature. The answer says what the service '
        + 'sees, in the order it authenticates: whether the key is known and your address allowed, the service clock and whether your timestamp is in '
        + 'the window, whether the nonce is well formed (and already used), the length and SHA-256 of the string to sign as the service builds it '
        + '(compare with the SHA-256 of your own), and whether your signature matches. It never answers the right signature. '
        + 'The nonce is not used up: you can send the real request afterwards. Each call counts as one failed authentication of your address '
        + '(SYS_RATE_LIMITED once over that budget). Sandbox only. Published test vectors: sdk/test-vectors/signing.json.',
      body: SignatureCheckBody,
      data: SignatureCheckReport,
      example: {
        apiKey: '0123456789abcdef0123456789abcdef', timestamp: '1795305600000', nonce: '12345', method: 'GET', payload: 'customerId=cusmwxdk8zr9bf0f6582',
        signature: 'e6e6316c06f97cd7045f7d2280467fb443893788d1e6807977de08030a664d07',
      },
      errors: ['SYS_RATE_LIMITED'],
      handler: ({ body, ip }) => checkSignature(deps, body, ip),
    }),
    route({
      method: 'GET',
      url: '/open-api/partner/v1/settings',
      auth: 'partner',
      tag: 'Partner',
      summary: "The calling partner's own settings",
      data: PartnerView,
      errors: [],
      // Issue 34: the row the call was authenticated on, which the replay-store statement of this
      // very request found current (authenticate.ts); read again only for another kind of caller.
      handler: async ({ partner }) => {
        const cached = authenticatedRow(partner);
        if (cached) return settingsView(cached);
        const row = await partnersById.load(partner.partnerId);
        if (!row) throw new ApiError('DAPI_API_KEY_INVALID');
        return partnerView(row);
      },
    }),
    route({
      method: 'POST',
      url: '/open-api/partner/v1/settings/time-zone',
      auth: 'partner',
      tag: 'Partner',
      summary: 'Set the time zone of your velocity limits',
      description: 'An IANA name (Asia/Hong_Kong, America/New_York, UTC). Daily, monthly, quarterly and yearly periods then follow '
        + 'local time, across daylight-saving changes. Each period switches at its next boundary in the zone it has now: usage already '
        + 'counted is neither split nor reset. query-quota shows each period\'s zone, start and end.',
      body: SetTimeZoneBody,
      data: PartnerView,
      errors: [],
      handler: ({ body, partner }) => setOwnTimeZone(deps, partner.partnerId, body.timeZone),
    }),
  ];
}
