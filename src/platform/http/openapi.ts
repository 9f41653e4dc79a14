/**
 * Finishes the OpenAPI document @fastify/swagger generates from the route definitions (issue 14):
 * `servers`, shared components (envelope, message detail, paging, every named contract schema
 * instead of its inlined copies), request examples, the Idempotency-Key header on business POSTs,
 * a `webhooks` section with every event type's payload, and partner routes before operator routes.
 * Pure function of the generated document; no domain knowledge (the caller passes the names).
 */

type Json = Record<string, unknown>;

export interface WebhookDoc {
  eventType: string;
  summary: string;
  /** What `businessId` is for this event. */
  businessId: string;
  data: unknown;
  example: unknown;
}

export interface OpenApiExtras {
  servers: { url: string; description: string }[];
  description: string;
  /** Named schemas (TypeBox contract exports): a generated copy equal to one becomes a $ref to it. */
  namedSchemas: Record<string, unknown>;
  webhooks: WebhookDoc[];
  /** Tags in display order; the rest follow in first-use order, operator tags last. */
  tagOrder: { name: string; description: string }[];
  /** Tags whose operations are for operators (listed after partner routes). */
  operatorTags: string[];
  /**
   * Operations no route definition describes (a WebSocket upgrade): path -> method -> operation.
   * Their responses are kept as given (not wrapped in the envelope); their schemas are shared.
   */
  extraPaths?: Record<string, Record<string, Json>>;
  /**
   * Real answers by operation (`GET /path`): a success and an error each, shown as the response
   * examples (under their HTTP status; a business error shares the 200 response with the success).
   */
  responseExamples?: Record<string, { success?: RecordedAnswer; error?: RecordedAnswer }>;
}

export interface RecordedAnswer {
  status: number;
  body: Json;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** JSON text with sorted keys, ignoring descriptions: equal schemas give equal text. */
function canonical(node: unknown): string {
  if (Array.isArray(node)) return `[${node.map(canonical).join(',')}]`;
  if (node === null || typeof node !== 'object') return JSON.stringify(node) ?? 'null';
  // @fastify/swagger writes a JSON Schema `const` as a one-value `enum` in request bodies.
  const source = 'const' in (node as Json) ? (({ const: c, ...r }) => ({ ...r, enum: [c] }))(node as Json) : (node as Json);
  const entries = Object.entries(source).filter(([k, v]) => v !== undefined && typeof k === 'string').sort(([a], [b]) => (a < b ? -1 : 1));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
}

/** Worth a component: an object with properties, a composition, or an array of such. */
function isStructured(node: unknown): boolean {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return false;
  const n = node as Json;
  if (n.properties && Object.keys(n.properties as Json).length > 0) return true;
  if (Array.isArray(n.allOf)) return true;
  if (Array.isArray(n.anyOf)) return (n.anyOf as unknown[]).some(isStructured);
  if (n.type === 'array') return isStructured(n.items);
  return false;
}

const PAGE_KEYS = 'page,pageSize,result,total';

const SHARED_SCHEMAS: Record<string, Json> = {
  MessageDetail: {
    type: 'object',
    description: 'Display object: filled on failures (type ERROR), null on success. Never judge success by it.',
    required: ['message', 'title', 'type', 'icon', 'action', 'linkTitle', 'linkUrl'],
    properties: Object.fromEntries(['message', 'title', 'type', 'icon', 'action', 'linkTitle', 'linkUrl'].map((k) => [k, { type: ['string', 'null'] }])),
  },
  Envelope: {
    type: 'object',
    description: 'The response envelope of every endpoint. `code` is the only success criterion: SYS_SUCCESS, or an error code.',
    required: ['code', 'message', 'messageDetail', 'data'],
    properties: {
      code: { type: 'string', description: 'SYS_SUCCESS on success; otherwise the error code', examples: ['SYS_SUCCESS'] },
      message: { type: ['string', 'null'] },
      messageDetail: { anyOf: [ref('MessageDetail'), { type: 'null' }] },
      data: { description: 'Business payload; null for actions that return nothing and on most failures' },
    },
  },
  ErrorData: {
    type: 'object',
    description: 'Detail some failures carry: the frozen capability code, for example.',
    properties: { errorCode: { type: 'string' }, errorMsg: { type: 'string' } },
  },
  ErrorEnvelope: {
    allOf: [ref('Envelope'), {
      type: 'object',
      properties: { code: { type: 'string', examples: ['DAPI_SIGN_INVALID'] }, data: { anyOf: [ref('ErrorData'), { type: 'null' }] } },
    }],
  },
  FrameworkRejection: {
    type: 'object',
    description: 'Framework-level rejection (missing or non-JSON Content-Type, malformed JSON, body over 64 KiB): HTTP 400, the only answer with `success`.',
    required: ['success', 'code', 'message', 'messageDetail', 'data'],
    properties: {
      success: { type: 'boolean', const: false },
      code: { type: 'string', const: 'SYS_ILLEGAL_PARAM' },
      message: { type: 'string' },
      messageDetail: { type: 'null' },
      data: { type: 'null' },
    },
  },
  Paging: {
    type: 'object',
    description: 'Paging envelope of list endpoints; `result` holds the items, newest first.',
    required: ['page', 'pageSize', 'total', 'result'],
    properties: {
      page: { type: 'integer', minimum: 1 },
      pageSize: { type: 'integer', minimum: 1, maximum: 100 },
      total: { type: 'number', description: 'Total count (a JSON number)' },
      result: { type: 'array', items: {} },
    },
  },
  WebhookEvent: {
    type: 'object',
    description: 'Body of every webhook. Deduplicate on eventId; drop updates whose sequence is not above the last applied for the businessId.',
    required: ['eventId', 'eventType', 'businessId', 'sequence', 'createTime', 'data'],
    properties: {
      eventId: { type: 'string', description: 'Stable across retries and resends' },
      eventType: { type: 'string' },
      businessId: { type: 'string' },
      sequence: { type: 'integer', description: 'Increases per businessId' },
      createTime: { type: 'string', format: 'date-time' },
      data: { description: 'The event payload' },
    },
  },
};

const SIGNATURE_HEADERS = [
  { name: 'X-DAPI-API-KEY', description: 'Your apiKey' },
  { name: 'X-DAPI-TIMESTAMP', description: '13-digit epoch milliseconds of the attempt' },
  { name: 'X-DAPI-NONCE', description: 'Integer in [10000, 99999]' },
  { name: 'X-DAPI-SIGN', description: 'lowercase hex HmacSHA256(apiKey + timestamp + nonce + body) keyed with your secretKey' },
  { name: 'X-DAPI-EVENT-ID', description: 'The eventId of the body' },
].map((h) => ({ name: h.name, in: 'header', required: true, description: h.description, schema: { type: 'string' } }));

const WEBHOOK_SECRET_HEADER = {
  name: 'X-DAPI-WEBHOOK-SIGN', in: 'header', required: false, schema: { type: 'string' },
  description: 'Only when you created a webhook signing secret: `v1=<hex>` per valid secret (two during a rotation overlap), each lowercase hex HmacSHA256(apiKey + timestamp + nonce + body) keyed with that webhook secret.',
};

const IDEMPOTENCY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: 'Optional, 1-255 visible ASCII characters, unique per request you mean (a UUID). The same key with the same body within 24 hours answers the '
    + 'original response (header `Idempotent-Replayed: true`) without a second write; the same key with another body is IDEMPOTENCY_KEY_REUSED; '
    + 'a copy sent while the first still runs waits for it (or, after 10 s, HTTP 409 IDEMPOTENCY_KEY_IN_USE). Not part of the signature.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
  example: '7f1c9e2a-4b8d-4e0f-9a51-2d6c3b7e8f10',
};

const SHARED_RESPONSES: Record<string, { name: string; description: string; schema: string }> = {
  400: { name: 'FrameworkRejection', schema: 'FrameworkRejection', description: 'SYS_ILLEGAL_PARAM: missing or non-JSON Content-Type, malformed JSON, body over 64 KiB' },
  401: { name: 'Unauthenticated', schema: 'ErrorEnvelope', description: 'DAPI_API_KEY_INVALID, DAPI_TIMESTAMP_FORMAT_ERROR, DAPI_TIMESTAMP_EXPIRED, DAPI_NONCE_INVALID, DAPI_SIGN_INVALID, DAPI_NONCE_REPLAYED, or SYS_UNAUTHORIZED on operator routes' },
  403: { name: 'IpNotAllowed', schema: 'ErrorEnvelope', description: 'DAPI_IP_NOT_ALLOWED: the caller address is not on the whitelist, or SYS_FORBIDDEN on operator routes: the operator\'s role does not allow the action' },
  409: { name: 'IdempotencyKeyInUse', schema: 'ErrorEnvelope', description: 'IDEMPOTENCY_KEY_IN_USE: a request with this Idempotency-Key is still executing; retry after Retry-After' },
  429: { name: 'RateLimited', schema: 'ErrorEnvelope', description: 'SYS_RATE_LIMITED: retry after the seconds in Retry-After' },
  500: { name: 'InternalError', schema: 'ErrorEnvelope', description: 'SYS_INTERNAL_ERROR: no internals in the body; the log has the x-request-id' },
  503: { name: 'Unavailable', schema: 'ErrorEnvelope', description: 'SYS_UNAVAILABLE: the service cannot reach its database for a moment (restart or failover); retry after the seconds in Retry-After with the same Idempotency-Key, network transaction id or externalTranId, which answers the first outcome if the request was booked after all' },
};

/** Example strings by field name (hints), tried before the generic candidates. */
const NAMED_SAMPLES: [RegExp, string][] = [
  [/^(currency|billingCurrency|fundingAsset|asset)$/, 'USD'],
  [/^phoneCountryCode$/, '852'],
  [/^middleName$/, 'Mei'],
  [/country/i, 'HK'],
  [/^mcc$/, '5814'],
  [/^phoneNumber$/, '91234567'],
  [/email/i, 'alice.tan@example.com'],
  [/url$/i, 'https://partner.example/webhooks'],
  [/^organizationId$/, 'orgmwxdk8zq49621f23a'],
  [/^(customerId|subjectId|custodianCustomerId)$/, 'cusmwxdk8zr9bf0f6582'],
  [/^cardId$/, 'cdmwxdk8zr3fa53eaf45'],
  [/^cardProfileId$/, 'sbx-visa-shared'],
  [/^(ruleId)$/, 'vrmwxdk8zrfc8dd4f18e'],
  [/^(transId|originalTransId)$/, 'txmwxdk8zrbfad304ec4'],
  [/^transactionId$/, 'ammwxdk8zr6d2f0b9c41'],
  [/^orderId$/, 'qrmwxdk8zr0e7a3c5b92'],
  [/^networkKeyId$/, 'nkmwxdk8zr4b8e1f0a63'],
  [/^operatorId$/, 'op_mwxdk8zr7c2a9e4f1'],
  [/^cardApplyId$/, 'camwxdk8zr720bb28e85'],
  [/^externalUserId$/, 'user-42'],
  [/^externalTranId$/, 'dep-20261124-0001'],
  [/NetworkTransactionId$|^networkTransactionId$/, 'net-1f8048b4'],
  [/^eventId$/, 'evmwxdk8zra34118636d'],
  [/^partnerId$/, 'ptmwxdk8zr3eac7b1705'],
  [/Ref$/, 'acme-0001'],
  [/^organizationName$/, 'Acme Trading Ltd'],
  [/^companyRegistrationNumber$/, 'HK-12345678'],
  [/^firstName$/, 'Alice'],
  [/^lastName$/, 'Tan'],
  [/^cardholderName$/, 'ALICE TAN'],
  [/^merchantName$/, 'Blue Bottle Coffee'],
  [/^(ruleName|name)$/, 'Acme'],
  [/^remark$/, 'requested by finance'],
  [/^(city|state)$/, 'Hong Kong'],
  [/^addressLine1$/, '1 Queen\'s Road Central'],
  [/^postalCode$/, '999077'],
];
const GENERIC_SAMPLES = ['sample', 'acme-0001', 'Alice', 'HK', 'USD', '5814', '91234567', 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A'];

function sampleString(n: Json, name: string): string | undefined {
  if (n.format === 'date-time') return '2026-11-22T06:30:21.000Z';
  if (n.format === 'email') return 'alice.tan@example.com';
  if (n.format === 'uri') return 'https://partner.example/webhooks';
  const pattern = typeof n.pattern === 'string' ? new RegExp(n.pattern, 'u') : null;
  const min = (n.minLength as number | undefined) ?? 0;
  const max = (n.maxLength as number | undefined) ?? Infinity;
  const candidates = [...NAMED_SAMPLES.filter(([re]) => re.test(name)).map(([, v]) => v), ...GENERIC_SAMPLES];
  return candidates.find((c) => c.length >= min && c.length <= max && (!pattern || pattern.test(c)));
}

/**
 * A request example generated from the schema (hand-written ones win): every property with a
 * plausible value (field-name hints, formats, patterns, bounds). The linter test checks that each
 * one validates against its schema.
 */
export function sampleOf(schema: unknown, name = ''): unknown {
  if (schema === null || typeof schema !== 'object') return undefined;
  const n = schema as Json;
  if (Array.isArray(n.examples) && n.examples.length) return n.examples[0];
  if ('const' in n) return n.const;
  if (Array.isArray(n.enum)) return n.enum[0];
  if (Array.isArray(n.anyOf)) {
    for (const option of n.anyOf as Json[]) {
      if (option.type === 'null') continue;
      const v = sampleOf(option, name);
      if (v !== undefined) return v;
    }
    return null;
  }
  if (Array.isArray(n.allOf)) return Object.assign({}, ...(n.allOf as unknown[]).map((p) => sampleOf(p, name)));
  const type = Array.isArray(n.type) ? (n.type as string[]).find((t) => t !== 'null') : n.type;
  if ('x-decimal' in n) return (n['x-decimal'] as { sign?: string }).sign === 'nonNegative' ? 0 : 100.5;
  switch (type) {
    case 'object': {
      const out: Json = {};
      const required = new Set((n.required as string[] | undefined) ?? []);
      for (const [key, prop] of Object.entries((n.properties ?? {}) as Json)) {
        const v = sampleOf(prop, key);
        if (v !== undefined) out[key] = v;
        else if (required.has(key)) return undefined;
      }
      return out;
    }
    case 'array': {
      const item = sampleOf(n.items, name.replace(/s$/, ''));
      const min = (n.minItems as number | undefined) ?? 0;
      return item === undefined || (n.maxItems === 0) ? [] : Array.from({ length: Math.max(1, min) }, () => item);
    }
    case 'string': return sampleString(n, name);
    case 'integer': return (n.minimum as number | undefined) ?? 1;
    case 'number': return (n.minimum as number | undefined) ?? 1;
    case 'boolean': return name === 'pciCertified' ? false : true;
    default: return undefined;
  }
}

class Components {
  readonly schemas: Record<string, unknown> = { ...SHARED_SCHEMAS };
  private readonly byCanonical = new Map<string, string>();
  private readonly named: Record<string, unknown>;

  constructor(named: Record<string, unknown>) {
    this.named = named;
    for (const [name, schema] of Object.entries(named)) {
      if (!isStructured(schema)) continue;
      const key = canonical(schema);
      if (!this.byCanonical.has(key)) this.byCanonical.set(key, name);
    }
  }

  /** The schema with every named part replaced by a $ref (and each page by Paging + its items). */
  share(node: unknown, self?: string): unknown {
    if (Array.isArray(node)) return node.map((n) => this.share(n));
    if (node === null || typeof node !== 'object') return node;
    const n = node as Json;
    if (isStructured(n)) {
      const name = this.byCanonical.get(canonical(n));
      if (name && name !== self) {
        if (!(name in this.schemas)) {
          this.schemas[name] = {}; // placeholder: guards against cycles
          this.schemas[name] = this.share(this.named[name], name);
        }
        return ref(name);
      }
    }
    const props = n.properties as Json | undefined;
    if (n.type === 'object' && props && Object.keys(props).sort().join(',') === PAGE_KEYS) {
      return { allOf: [ref('Paging'), { type: 'object', properties: { result: this.share(props.result) } }], ...(n.description ? { description: n.description } : {}) };
    }
    const out: Json = {};
    for (const [k, v] of Object.entries(n)) out[k] = k === 'examples' || k === 'example' || k === 'const' || k === 'enum' || k === 'default' ? v : this.share(v);
    return out;
  }
}

const NULL_DATA_ENVELOPE = { allOf: [ref('Envelope'), { type: 'object', properties: { data: { type: 'null' } } }] };
const UNDESCRIBED_DATA_ENVELOPE = {
  allOf: [ref('Envelope'), { type: 'object', properties: { data: { description: 'The answer (not described by a schema: see the example)' } } }],
};

/** The envelope of a 200 answer: Envelope with this route's data. */
function successSchema(components: Components, generated: Json | undefined): unknown {
  const data = (generated?.properties as Json | undefined)?.data as Json | undefined;
  // The router writes data as anyOf [route data, null] (or null alone for actions).
  const anyOf = data?.anyOf as unknown[] | undefined;
  const payload = anyOf ? anyOf.find((s) => (s as Json).type !== 'null') : undefined;
  if (!payload) return NULL_DATA_ENVELOPE;
  return { allOf: [ref('Envelope'), { type: 'object', properties: { data: { anyOf: [components.share(payload), { type: 'null' }] } } }] };
}

/** Puts an operation's recorded success and error answers into its responses as named examples. */
function addResponseExamples(responses: Json, recorded: { success?: RecordedAnswer; error?: RecordedAnswer } | undefined): void {
  if (!recorded) return;
  const add = (answer: RecordedAnswer, name: string, summary: string) => {
    const status = String(answer.status);
    let res = responses[status] as Json | undefined;
    if (!res || '$ref' in res) {
      // A shared response (401, 403, ...) becomes this operation's own copy, so it can carry the example.
      const shared = SHARED_RESPONSES[status];
      res = { description: shared?.description ?? `HTTP ${status}`, content: { 'application/json': { schema: ref(shared?.schema ?? 'ErrorEnvelope') } } };
    }
    const content = (res.content as Record<string, Json>)['application/json'];
    const examples = { ...((content.examples as Json | undefined) ?? {}), [name]: { summary, value: answer.body } };
    responses[status] = { ...res, content: { ...(res.content as Json), 'application/json': { ...content, examples } } };
  };
  if (recorded.success) {
    const ok = responses['200'] as Json | undefined;
    const schema = (ok?.content as Record<string, Json> | undefined)?.['application/json']?.schema;
    // A route without a declared answer is documented as data null; when it does answer with data, say so.
    if (ok && recorded.success.body.data !== null && JSON.stringify(schema) === JSON.stringify(NULL_DATA_ENVELOPE)) {
      responses['200'] = { ...ok, content: { 'application/json': { schema: UNDESCRIBED_DATA_ENVELOPE } } };
    }
    add(recorded.success, 'success', 'Success (a real sandbox answer)');
  }
  if (recorded.error) {
    const code = String(recorded.error.body.code);
    add(recorded.error, code, `${code} (a real sandbox answer)`);
  }
}

export function finishOpenApi(doc: Json, extras: OpenApiExtras): Json {
  const components = new Components(extras.namedSchemas);
  const extraOps = new Set<Json>();
  const paths = { ...((doc.paths ?? {}) as Record<string, Record<string, Json>>) };
  for (const [key, item] of Object.entries(extras.extraPaths ?? {})) {
    paths[key] = item;
    for (const op of Object.values(item)) extraOps.add(op);
  }
  const rank = (item: Record<string, Json>) => {
    const ops = METHODS.map((m) => item[m]).filter(Boolean);
    return ops.every((op) => ((op.tags as string[] | undefined) ?? []).some((t) => extras.operatorTags.includes(t))) ? 1 : 0;
  };
  const orderedPaths: Record<string, unknown> = {};
  const sortedKeys = Object.keys(paths).map((k, i) => ({ k, i, r: rank(paths[k]) })).sort((a, b) => a.r - b.r || a.i - b.i).map((e) => e.k);
  const usedTags: string[] = [];
  for (const key of sortedKeys) {
    const item = paths[key];
    const outItem: Json = {};
    for (const [method, opIn] of Object.entries(item)) {
      if (!METHODS.includes(method)) {
        outItem[method] = opIn;
        continue;
      }
      const op: Json = { ...opIn };
      for (const t of (op.tags as string[] | undefined) ?? []) if (!usedTags.includes(t)) usedTags.push(t);
      const handWritten = op['x-request-example'];
      delete op['x-request-example'];
      const acceptsKey = op['x-idempotent'];
      delete op['x-idempotent'];
      const body = op.requestBody as Json | undefined;
      if (body) {
        const content = body.content as Record<string, Json>;
        const json = content['application/json'];
        const example = handWritten !== undefined ? handWritten : sampleOf(json.schema);
        op.requestBody = {
          ...body,
          content: { 'application/json': { ...json, schema: components.share(json.schema), ...(example !== undefined ? { example } : {}) } },
        };
      }
      if (Array.isArray(op.parameters)) op.parameters = (op.parameters as Json[]).map((p) => ({ ...p, schema: components.share(p.schema) }));
      const security = op.security as Json[] | undefined;
      const isPartner = security?.some((s) => 'sign' in s && 'apiKey' in s);
      if (method === 'post' && isPartner && acceptsKey !== false) op.parameters = [...((op.parameters as Json[] | undefined) ?? []), { $ref: '#/components/parameters/IdempotencyKey' }];
      const responses: Json = {};
      if (extraOps.has(opIn)) {
        for (const [status, res] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
          const content = res.content as Record<string, Json> | undefined;
          responses[status] = content
            ? { ...res, content: Object.fromEntries(Object.entries(content).map(([type, c]) => [type, { ...c, schema: components.share(c.schema) }])) }
            : res;
        }
        op.responses = responses;
        outItem[method] = op;
        continue;
      }
      for (const [status, resIn] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
        const res = resIn as Json;
        const schema = ((res.content as Record<string, Json> | undefined)?.['application/json']?.schema) as Json | undefined;
        if (status !== '200' && SHARED_RESPONSES[status]) {
          responses[status] = { $ref: `#/components/responses/${SHARED_RESPONSES[status].name}` };
          continue;
        }
        const target = status === '200' ? successSchema(components, schema) : ref('ErrorEnvelope');
        responses[status] = { description: res.description, content: { 'application/json': { schema: target } } };
      }
      addResponseExamples(responses, extras.responseExamples?.[`${method.toUpperCase()} ${key}`]);
      op.responses = responses;
      outItem[method] = op;
    }
    orderedPaths[key] = outItem;
  }

  const tagNames = [
    ...extras.tagOrder.map((t) => t.name).filter((t) => usedTags.includes(t) && !extras.operatorTags.includes(t)),
    ...usedTags.filter((t) => !extras.tagOrder.some((o) => o.name === t) && !extras.operatorTags.includes(t)),
    ...extras.operatorTags.filter((t) => usedTags.includes(t)),
  ];
  const tags = tagNames.map((name) => ({ name, description: extras.tagOrder.find((t) => t.name === name)?.description ?? name }));

  const webhooks: Record<string, unknown> = {};
  for (const w of extras.webhooks) {
    const words = w.eventType.toLowerCase().split('_');
    webhooks[w.eventType] = {
      post: {
        operationId: `webhook${words.map((x) => x[0].toUpperCase() + x.slice(1)).join('')}`,
        summary: w.summary,
        description: `${w.summary}. \`businessId\` is ${w.businessId}. POSTed to your webhookUrl, signed like your requests; answer any 2xx within 5 s, else it is retried for at least 24 hours. `
          + 'A sample of it (POST /open-api/webhook/v1/sample) carries `data.test` = true and is attempted once.',
        tags: ['Webhooks'],
        security: [],
        parameters: [...SIGNATURE_HEADERS, WEBHOOK_SECRET_HEADER],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { allOf: [ref('WebhookEvent'), { type: 'object', properties: { eventType: { type: 'string', const: w.eventType }, data: components.share(w.data) } }] },
              example: {
                eventId: 'evmwxdk8zra34118636d', eventType: w.eventType, businessId: 'cdmwxdk8zr3fa53eaf45', sequence: 1,
                createTime: '2026-11-22T06:30:21.000Z', data: w.example,
              },
            },
          },
        },
        responses: { '200': { description: 'Any 2xx acknowledges the event; anything else (or no answer in 5 s) is retried' } },
      },
    };
  }

  const { paths: _paths, components: generatedComponents, tags: _tags, ...rest } = doc;
  return {
    ...rest,
    info: { ...(doc.info as Json), description: extras.description },
    servers: extras.servers,
    tags,
    paths: orderedPaths,
    webhooks,
    components: {
      ...(generatedComponents as Json),
      schemas: components.schemas,
      responses: Object.fromEntries(Object.values(SHARED_RESPONSES).map((r) => [r.name, {
        description: r.description, content: { 'application/json': { schema: ref(r.schema) } },
      }])),
      parameters: { IdempotencyKey: IDEMPOTENCY_PARAMETER },
    },
  };
}
