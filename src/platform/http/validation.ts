import { Ajv, type AnySchemaObject, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { ApiError } from '../errors.ts';
import { DECIMAL_KEYWORD, type AmountRules } from '../../../sdk/contract/wire.ts';
import { amountViolation } from '../money.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** Schema keyword marking an exact decimal amount (see Money() in sdk/contract/wire.ts). */
export { DECIMAL_KEYWORD };

/**
 * Characters no string of the API accepts (docs/security.md): C0 controls (NUL included: PostgreSQL
 * cannot store it), DEL, C1 controls, and lone UTF-16 surrogates (not Unicode; they would be
 * stored as U+FFFD). No field of the interface is multi-line, so tab and newlines are refused too.
 * Checked on every string of every body and query, whatever its kind (ids, names, free text,
 * emails, URLs); each kind's own pattern or format narrows it further.
 */
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\ud800-\udfff]/u;
const PLAIN_TEXT_KEYWORD = 'x-plain-text';
/**
 * Schema annotation of the rare string that carries raw text of the caller's (the payload a partner
 * signed, for the signature self-check): tab, newlines and other controls pass; lone surrogates
 * are still refused (they are not Unicode, so they have no UTF-8 bytes to sign).
 */
export const RAW_TEXT_KEYWORD = 'x-raw-text';
const LONE_SURROGATE = /[\ud800-\udfff]/u;
/**
 * Review h-java: on partner routes an optional body field sent as JSON null is read as absent.
 * Java's Jackson (by default), .NET and Go write every unset field of a request object as null, and
 * the service itself answers an absent optional value as null (D48), so a partner echoing what it
 * read sends null back; before, some optional fields took null (`remark` of a rule, `middleName`) and
 * others refused it (`remark` of a credit, `removeRestrictions`, `ruleIds`). A field whose schema
 * takes null keeps its own meaning; a required field sent as null is still refused. The schema
 * names, per object, its optional fields that do not take null (see forRuntime).
 */
const NULL_IS_ABSENT_KEYWORD = 'x-null-is-absent';

function newAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes, useDefaults: true, removeAdditional: false });
  addFormats(ajv);
  ajv.addKeyword({
    keyword: PLAIN_TEXT_KEYWORD,
    errors: true,
    validate: function validatePlainText(_enabled: boolean, data: unknown): boolean {
      if (typeof data !== 'string' || !CONTROL_CHARACTERS.test(data)) return true;
      (validatePlainText as unknown as { errors: Partial<ErrorObject>[] }).errors = [
        { keyword: PLAIN_TEXT_KEYWORD, message: 'must not contain control characters or invalid Unicode', params: {} },
      ];
      return false;
    },
  });
  ajv.addKeyword({
    keyword: RAW_TEXT_KEYWORD,
    errors: true,
    validate: function validateRawText(_enabled: boolean, data: unknown): boolean {
      if (typeof data !== 'string' || !LONE_SURROGATE.test(data)) return true;
      (validateRawText as unknown as { errors: Partial<ErrorObject>[] }).errors = [
        { keyword: RAW_TEXT_KEYWORD, message: 'must be valid Unicode (no lone surrogates)', params: {} },
      ];
      return false;
    },
  });
  ajv.addKeyword({
    keyword: NULL_IS_ABSENT_KEYWORD,
    type: 'object',
    schemaType: 'array',
    modifying: true,
    before: 'properties',
    validate: (names: string[], data: Record<string, unknown>, parent?: AnySchemaObject): boolean => {
      const properties = (parent?.properties ?? {}) as Record<string, { default?: unknown }>;
      for (const name of names) {
        if (data[name] !== null) continue;
        // Ajv fills defaults (useDefaults) before this keyword runs, and only for absent fields.
        const fallback = properties[name]?.default;
        if (fallback === undefined) delete data[name];
        else data[name] = structuredClone(fallback);
      }
      return true;
    },
  });
  ajv.addKeyword({
    keyword: DECIMAL_KEYWORD,
    errors: true,
    validate: function validateDecimal(rules: AmountRules, data: unknown): boolean {
      const violation = amountViolation(data, rules);
      if (violation === null) return true;
      (validateDecimal as unknown as { errors: Partial<ErrorObject>[] }).errors = [
        { keyword: DECIMAL_KEYWORD, message: violation, params: {} },
      ];
      return false;
    },
  });
  return ajv;
}

// Bodies are strict JSON (no coercion: "10" is not a number); query strings are all text, so they
// are coerced to the declared types.
const bodyAjv = newAjv(false);
const queryAjv = newAjv(true);

/** Whether a schema admits null (one without a type, which may, is counted as admitting it: left alone). */
function admitsNull(schema: unknown): boolean {
  if (schema === null || typeof schema !== 'object') return schema !== false;
  const node = schema as Record<string, unknown>;
  if ('const' in node) return node.const === null;
  if (Array.isArray(node.enum)) return node.enum.includes(null);
  if (Array.isArray(node.anyOf) || Array.isArray(node.oneOf)) return ((node.anyOf ?? node.oneOf) as unknown[]).some(admitsNull);
  if (Array.isArray(node.allOf)) return (node.allOf as unknown[]).every(admitsNull);
  if (node.type === undefined) return true;
  return node.type === 'null' || (Array.isArray(node.type) && node.type.includes('null'));
}

/**
 * Amounts are LosslessNumber objects at run time, so the compiled copy of a schema drops `type`
 * from decimal nodes and lets the x-decimal keyword check them; the published OpenAPI document
 * keeps `type: number`. Every string node gets the plain-text check, unless marked raw text. With
 * `nullIsAbsent` (partner bodies), each object names its optional fields that do not admit null.
 */
function forRuntime(schema: unknown, nullIsAbsent = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => forRuntime(s, nullIsAbsent));
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  const node = schema as Record<string, unknown>;
  for (const [key, value] of Object.entries(node)) out[key] = forRuntime(value, nullIsAbsent);
  if (DECIMAL_KEYWORD in node) delete out.type;
  if ((node.type === 'string' || (Array.isArray(node.type) && node.type.includes('string'))) && node[RAW_TEXT_KEYWORD] !== true) out[PLAIN_TEXT_KEYWORD] = true;
  if (nullIsAbsent && node.type === 'object' && node.properties !== null && typeof node.properties === 'object') {
    const required = new Set((node.required as string[] | undefined) ?? []);
    const optional = Object.entries(node.properties as Record<string, unknown>)
      .filter(([name, property]) => !required.has(name) && !admitsNull(property)).map(([name]) => name);
    if (optional.length > 0) out[NULL_IS_ABSENT_KEYWORD] = optional;
  }
  return out;
}

function fieldOf(error: ErrorObject): string {
  const path = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    return path ? `${path}.${missing}` : missing;
  }
  if (error.keyword === 'additionalProperties') {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    return path ? `${path}.${extra}` : extra;
  }
  return path || '(root)';
}

function describe(error: ErrorObject): string {
  if (error.keyword === 'required') return 'is required';
  if (error.keyword === 'additionalProperties') return 'is not a known field';
  if (error.keyword === 'enum') {
    return `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
  }
  return error.message ?? 'is invalid';
}

type SchemaPart = 'query' | 'body' | 'partnerBody';
const compiledSchemas: Record<SchemaPart, WeakMap<object, ValidateFunction>> = {
  query: new WeakMap(), body: new WeakMap(), partnerBody: new WeakMap(),
};

function compiled(schema: object, part: SchemaPart): ValidateFunction {
  const cache = compiledSchemas[part];
  let validate = cache.get(schema);
  if (!validate) {
    validate = (part === 'query' ? queryAjv : bodyAjv).compile(forRuntime(schema, part === 'partnerBody') as object);
    cache.set(schema, validate);
  }
  return validate;
}

const DECIMAL_INTEGER = /^-?[0-9]+$/;
const integerFields = new WeakMap<object, string[]>();

/**
 * D9, D10: an integer of the query string (`page`, `pageSize`) is written in decimal digits. Ajv's
 * coercion turns any text JavaScript reads as a number into one (`0x10` -> 16, `1e3` -> 1000,
 * ` 1` -> 1), so such values are refused before it runs. Answers the first offending field, or null.
 */
function nonDecimalInteger(schema: object, data: unknown): string | null {
  if (data === null || typeof data !== 'object') return null;
  let fields = integerFields.get(schema);
  if (!fields) {
    const props = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
    fields = Object.entries(props).filter(([, p]) => p?.type === 'integer').map(([name]) => name);
    integerFields.set(schema, fields);
  }
  for (const name of fields) {
    const value = (data as Record<string, unknown>)[name];
    if (typeof value === 'string' && !DECIMAL_INTEGER.test(value)) return name;
  }
  return null;
}

/** D10: every violation is DAPI_PARAM_INVALID naming the field. */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart, url }) => {
  const coerce = httpPart !== 'body';
  // Operator and network routes (/internal/) keep null a refusal: strict bodies, like their unknown fields.
  const part: SchemaPart = coerce ? 'query' : url.startsWith('/internal/') ? 'body' : 'partnerBody';
  // Compiled at the route's first request, not when the route is registered: a start of the
  // service then compiles none of its route schemas (most of its start-up CPU), and a process
  // compiles each schema once, however many app instances it builds. The whole suite sends a
  // request to every route (fuzz-openapi), so a schema Ajv rejects still fails a test.
  let validate: ValidateFunction | undefined;
  return (data: unknown) => {
    validate ??= compiled(schema as object, part);
    if (httpPart === 'body' && (data === null || typeof data !== 'object' || Array.isArray(data))) {
      return { error: new ApiError('DAPI_PARAM_INVALID', 'Invalid parameter (root): body must be a JSON object') };
    }
    if (coerce) {
      const field = nonDecimalInteger(schema as object, data);
      if (field !== null) return { error: new ApiError('DAPI_PARAM_INVALID', `Invalid parameter ${field}: must be integer`) };
    }
    if (validate(data)) return { value: data };
    const first = validate.errors![0];
    const field = fieldOf(first);
    return { error: new ApiError('DAPI_PARAM_INVALID', `Invalid parameter ${field}: ${describe(first)}`) };
  };
};
