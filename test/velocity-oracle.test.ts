import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decimal, decimalText, type Card, type CardServiceClient, type CreateRuleParams, type Quota } from '../sdk/index.ts';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { approvedEmployee } from './helpers/companies.ts';
import { cardWorld, issueCard, ref, type CardWorld } from './helpers/cards.ts';
import {
  PERIODS, VelocityOracle, type AmountLimitCents, type Control, type CountLimits, type FilterGroup, type LimitGroup, type OracleCard, type OracleRule,
  type OracleTransaction,
} from './oracles/velocity.ts';

/**
 * The differential test of velocity (issue 33, D31, D32, D45): the same random rules, bindings and
 * transactions go to the service (HTTP: create-rule, bind-rule, change-rule-status, sandbox
 * authorization, reversal and expiry; the decision is card_velocity_refusal and the usage
 * card_authorize / velocity_usage_give_back in the database) and to the TypeScript oracle
 * (test/oracles/velocity.ts). Every authorization's decision (approved, reason and detail) and,
 * after every step, every usage figure of the run's employee card, company card and employee
 * (each control group, currency and period: amount and count) must agree.
 *
 * Each run has a new employee with one employee card and one company card (custodian: the
 * employee), so an employee's usage is its card's usage and the quota shows raw usage. Funds are
 * ample: velocity is the only stage that declines. The service clock starts just before a
 * quarter's end and only moves forward (the `advance` command), so periods roll over.
 * Fixed seed by default; PROPERTY_RUNS=n and PROPERTY_SEED=s for more.
 */

const START = Date.parse('2026-03-31T20:00:00.000Z');
const HOUR_MS = 3_600_000;
const RUNS = process.env.PROPERTY_RUNS ? Number(process.env.PROPERTY_RUNS) : 25;
const SEED = process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : 33;

const CURRENCIES = ['USD', 'HKD', 'EUR', 'GBP'] as const;
const BILLING = ['USD', 'HKD'] as const;
const MCCS = ['5814', '5411', '6011'] as const;
const COUNTRIES = ['HK', 'US', 'GB'] as const;

/** "12.34" of 1234 cents. */
const money = (cents: number) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
/** Exact cents of a wire decimal. */
function cents(value: unknown): number {
  const m = /^(\d+)(?:\.(\d{1,2}))?$/.exec(decimalText(value));
  assert.ok(m, `not a 2-decimal amount: ${decimalText(value)}`);
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
}

// ---- Random rules ----

const capCents = fc.integer({ min: 500, max: 20_000 });
const countCap = fc.integer({ min: 1, max: 4 });
const countLimits: fc.Arbitrary<CountLimits> = fc.record(
  { daily: countCap, monthly: countCap, quarterly: countCap, yearly: countCap }, { requiredKeys: [] },
).filter((c) => Object.keys(c).length > 0);
const amountLimit = (currency: string): fc.Arbitrary<AmountLimitCents> => fc.record(
  { perTransaction: capCents, daily: capCents, monthly: capCents, quarterly: capCents, yearly: capCents }, { requiredKeys: [] },
).filter((l) => Object.keys(l).length > 0).map((l) => ({ currency, ...l }));
const amountLimits: fc.Arbitrary<AmountLimitCents[]> = fc.subarray([...BILLING])
  .chain((currencies): fc.Arbitrary<AmountLimitCents[]> => (currencies.length === 0 ? fc.constant([]) : fc.tuple(...currencies.map(amountLimit))));
const limitGroup: fc.Arbitrary<LimitGroup> = fc.record({ amountLimits, countLimits: fc.option(countLimits, { nil: undefined }) })
  .filter((g) => g.amountLimits.length > 0 || g.countLimits !== undefined);
const filter = (values: readonly string[]): fc.Arbitrary<FilterGroup> => fc.record({
  filterType: fc.constantFrom('WHITELIST' as const, 'BLACKLIST' as const),
  values: fc.subarray([...values], { minLength: 1 }),
});
type RuleSpec = Omit<OracleRule, 'ruleId' | 'active'> & { bindTo: ('employeeCard' | 'employee' | 'companyCard')[] };
/** Present in about one rule of `1 + absentWeight`. */
const sometimes = <T>(arb: fc.Arbitrary<T>, absentWeight: number): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: absentWeight, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
const ruleSpec: fc.Arbitrary<RuleSpec> = fc.record({
  purchaseControl: sometimes(limitGroup, 1),
  cashAdvanceControl: sometimes(fc.oneof(
    { weight: 3, arbitrary: limitGroup.map((g) => ({ allowed: true, ...g })) },
    { weight: 1, arbitrary: fc.constant<LimitGroup & { allowed: boolean }>({ allowed: false, amountLimits: [] }) },
  ), 1),
  // Filters are rarer, so that most transactions reach the caps.
  currencyControl: sometimes(filter(CURRENCIES), 3),
  mccControl: sometimes(filter(MCCS), 3),
  geographicControl: sometimes(filter(COUNTRIES), 3),
  bindTo: fc.subarray(['employeeCard', 'employee', 'companyCard'] as const, { minLength: 1 }),
}).map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)) as RuleSpec)
  .filter((r) => Object.keys(r).length > 1);

// ---- Random commands ----

type Command =
  | { op: 'authorize'; card: 'employeeCard' | 'companyCard'; channel: 'POS' | 'ECOM' | 'ATM'; currency: string; billingCurrency: string; mcc: string; country: string; cents: number }
  | { op: 'reverse'; auth: number; part: number | null }
  | { op: 'expire'; auth: number }
  | { op: 'toggle'; rule: number }
  | { op: 'advance'; hours: number };

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 6, arbitrary: fc.record({
    op: fc.constant('authorize' as const),
    card: fc.constantFrom('employeeCard' as const, 'companyCard' as const),
    channel: fc.constantFrom('POS' as const, 'ECOM' as const, 'ATM' as const),
    currency: fc.constantFrom(...CURRENCIES),
    billingCurrency: fc.constantFrom(...BILLING),
    mcc: fc.constantFrom(...MCCS),
    country: fc.constantFrom(...COUNTRIES),
    cents: fc.oneof(fc.integer({ min: 1, max: 3_000 }), fc.integer({ min: 1, max: 20_000 })),
  }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('reverse' as const), auth: fc.nat(), part: fc.option(fc.integer({ min: 1, max: 999 }), { nil: null }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('expire' as const), auth: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('toggle' as const), rule: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('advance' as const), hours: fc.integer({ min: 1, max: 40 }) }) },
);
const scenario = fc.record({
  rules: fc.array(ruleSpec, { minLength: 1, maxLength: 3 }),
  commands: fc.array(command, { minLength: 4, maxLength: 16, size: 'max' }),
});

// ---- The wire form of a rule ----

function wireGroup(g: LimitGroup) {
  return {
    amountLimits: g.amountLimits.map((l) => Object.fromEntries(Object.entries(l).map(([k, v]) => [k, typeof v === 'number' ? decimal(money(v)) : v]))),
    ...(g.countLimits ? { countLimits: g.countLimits } : {}),
  };
}

function wireRule(spec: RuleSpec): Partial<CreateRuleParams> {
  const cash = spec.cashAdvanceControl;
  return {
    ...(spec.purchaseControl ? { purchaseControl: wireGroup(spec.purchaseControl) } : {}),
    ...(cash ? { cashAdvanceControl: cash.allowed ? { allowed: true, ...wireGroup(cash) } : { allowed: false } } : {}),
    ...(spec.currencyControl ? { currencyControl: spec.currencyControl } : {}),
    ...(spec.mccControl ? { mccControl: spec.mccControl } : {}),
    ...(spec.geographicControl ? { geographicControl: spec.geographicControl } : {}),
  } as Partial<CreateRuleParams>;
}

// ---- The test ----

interface Auth { transId: string; tx: OracleTransaction; held: number; pending: boolean }

describe('velocity: the service against the oracle (D31, D32, D45)', () => {
  let svc: TestService;
  let world: CardWorld;
  let client: CardServiceClient;

  before(async () => {
    svc = await startService();
    svc.clock.offsetMs = START - Date.now();
    world = await cardWorld(svc);
    client = world.client;
    for (const currency of BILLING) {
      await client.sandbox.deposit({ subjectType: 'ORGANIZATION', subjectId: world.org.organizationId, currency, amount: decimal('100000000.00') });
    }
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  /** Every usage figure of a subject as the service shows it: `control|currency|period` -> cents and count. */
  async function usageFigures(subjectType: 'CARD' | 'CUSTOMER', subjectId: string): Promise<Map<string, { cents: number; count: number }>> {
    const quota: Quota = await client.velocity.queryQuota({ organizationId: world.org.organizationId, subjectType, subjectId });
    const figures = new Map<string, { cents: number; count: number }>();
    for (const [control, group] of [['PURCHASE', quota.purchase], ['CASH_ADVANCE', quota.cashAdvance]] as const) {
      for (const currency of BILLING) {
        const line = group.amountLimits.find((l) => l.currency === currency);
        assert.ok(line, `${subjectType} ${subjectId} quota lists ${currency}`);
        for (const period of PERIODS) {
          const p = period.toLowerCase() as 'daily' | 'monthly' | 'quarterly' | 'yearly';
          figures.set(`${control}|${currency}|${period}`, { cents: cents(line[p].usedAmount), count: group.countLimits[p].usedCount });
        }
      }
    }
    return figures;
  }

  function expectedFigures(oracle: VelocityOracle, scope: 'CARD' | 'CUSTOMER', subjectId: string, at: Date) {
    const figures = new Map<string, { cents: number; count: number }>();
    for (const control of ['PURCHASE', 'CASH_ADVANCE'] as Control[]) {
      for (const currency of BILLING) {
        for (const period of PERIODS) figures.set(`${control}|${currency}|${period}`, oracle.used(scope, subjectId, control, currency, period, at));
      }
    }
    return figures;
  }

  /** Decisions seen across the runs (reason, and for caps the period), so the test can show it covered each kind. */
  const seen = new Map<string, number>();

  async function runScenario(s: { rules: RuleSpec[]; commands: Command[] }, trace: string[]): Promise<void> {
    const employee = await approvedEmployee(client, world.org.organizationId);
    const runWorld = { ...world, employee };
    const employeeCard: Card = await issueCard(svc, runWorld);
    const companyCard: Card = await issueCard(svc, runWorld, { company: true });
    const cards: Record<'employeeCard' | 'companyCard', OracleCard> = {
      employeeCard: { cardId: employeeCard.cardId, employeeId: employee.customerId },
      companyCard: { cardId: companyCard.cardId, employeeId: null },
    };
    const oracle = new VelocityOracle();
    const rules: { ruleId: string; version: number; active: boolean }[] = [];
    for (const spec of s.rules) {
      svc.clock.advance(1); // creation order is the order of the rules
      const rule = await client.velocity.createRule({ organizationId: world.org.organizationId, ruleRef: ref('rule'), ruleName: 'oracle', ...wireRule(spec) } as CreateRuleParams);
      const { bindTo, ...controls } = spec;
      oracle.addRule({ ruleId: rule.ruleId, active: true, ...controls });
      rules.push({ ruleId: rule.ruleId, version: rule.ruleVersion, active: true });
      for (const target of bindTo) {
        const [subjectType, subjectId] = target === 'employee' ? ['CUSTOMER', employee.customerId] as const : ['CARD', cards[target].cardId] as const;
        await client.velocity.bindRule({ organizationId: world.org.organizationId, ruleId: rule.ruleId, subjectType, subjectIds: [subjectId] });
        oracle.bind(rule.ruleId, subjectType, subjectId);
      }
      trace.push(`rule ${rule.ruleId} ${JSON.stringify(spec)}`);
    }
    const auths: Auth[] = [];

    for (const c of s.commands) {
      const now = () => new Date(svc.clock.now());
      if (c.op === 'authorize') {
        const card = cards[c.card];
        const foreign = !(BILLING as readonly string[]).includes(c.currency);
        const billingCurrency = foreign ? c.billingCurrency : c.currency;
        const tx: OracleTransaction = {
          card, control: c.channel === 'ATM' ? 'CASH_ADVANCE' : 'PURCHASE', currency: c.currency, mcc: c.mcc, country: c.country,
          billingCents: c.cents, billingCurrency, at: now(),
        };
        const expected = oracle.decide(tx);
        const t = await client.sandbox.authorize({
          cardId: card.cardId, amount: decimal(money(c.cents)), currency: c.currency, merchantName: 'Oracle Shop', mcc: c.mcc,
          merchantCountry: c.country, channel: c.channel,
          ...(foreign ? { billingAmount: decimal(money(c.cents)), billingCurrency: billingCurrency as 'USD' | 'HKD' } : {}),
        });
        const got = t.approved ? null : `${t.declineReason}${t.declineDetail ? `:${t.declineDetail}` : ''}`;
        trace.push(`authorize ${JSON.stringify(c)} at ${tx.at.toISOString()}: service ${got ?? 'APPROVED'}, oracle ${expected ?? 'APPROVED'}`);
        assert.equal(got, expected, `decision of ${JSON.stringify(c)}`);
        const kind = got === null ? 'APPROVED' : got.startsWith('VELOCITY_LIMIT_EXCEEDED') ? `LIMIT:${got.split(':')[2]}` : got.split(':')[0];
        seen.set(kind, (seen.get(kind) ?? 0) + 1);
        if (t.approved) {
          oracle.record(tx);
          auths.push({ transId: t.transId, tx, held: c.cents, pending: true });
        }
      } else if (c.op === 'reverse' || c.op === 'expire') {
        const open = auths.filter((a) => a.pending);
        if (open.length === 0) continue;
        const a = open[c.auth % open.length];
        if (c.op === 'expire') {
          await client.sandbox.expire({ transId: a.transId });
          oracle.giveBack(a.tx, a.held, 1);
          a.held = 0;
        } else {
          const amount = c.part === null ? a.held : Math.max(1, Math.floor((a.held * c.part) / 1000));
          await client.sandbox.reverse({ transId: a.transId, amount: decimal(money(amount)) });
          a.held -= amount;
          // The count goes back when nothing is held any more (D32).
          oracle.giveBack(a.tx, amount, a.held === 0 ? 1 : 0);
        }
        a.pending = a.held > 0;
        trace.push(`${c.op} ${a.transId}: held ${a.held}`);
      } else if (c.op === 'toggle') {
        const r = rules[c.rule % rules.length];
        const changed = await client.velocity.changeRuleStatus({
          organizationId: world.org.organizationId, ruleId: r.ruleId, status: r.active ? 'INACTIVE' : 'ACTIVE', ruleVersion: r.version,
        });
        r.version = changed.ruleVersion;
        r.active = !r.active;
        oracle.setActive(r.ruleId, r.active);
        trace.push(`toggle ${r.ruleId} -> ${r.active ? 'ACTIVE' : 'INACTIVE'}`);
      } else {
        svc.clock.advance(c.hours * HOUR_MS);
        trace.push(`advance ${c.hours} h -> ${now().toISOString()}`);
      }

      const at = now();
      for (const [scope, subjectId] of [
        ['CARD', cards.employeeCard.cardId], ['CARD', cards.companyCard.cardId], ['CUSTOMER', employee.customerId],
      ] as const) {
        assert.deepEqual(await usageFigures(scope, subjectId), expectedFigures(oracle, scope, subjectId, at), `usage of ${scope} ${subjectId} after ${c.op}`);
      }
    }
  }

  it('every decision and every usage figure of random rules and transactions agree with the oracle', async () => {
    let lastTrace: string[] = [];
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const trace: string[] = [];
        lastTrace = trace;
        try {
          await runScenario(s, trace);
        } catch (err) {
          (err as Error).message += `\n${trace.join('\n')}`;
          throw err;
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: !process.env.PROPERTY_SHRINK, verbose: true },
    );
    assert.ok(lastTrace.length > 0);
    // Not vacuous: the runs met every stage of the velocity decision.
    const kinds = [...seen.keys()];
    for (const kind of ['APPROVED', 'CASH_ADVANCE_NOT_ALLOWED', 'CURRENCY_NOT_ALLOWED', 'MCC_NOT_ALLOWED', 'COUNTRY_NOT_ALLOWED']) {
      assert.ok(kinds.includes(kind), `the runs saw ${kind} (saw ${kinds.join(', ')})`);
    }
    assert.ok(kinds.some((k) => k.startsWith('LIMIT:') && !k.endsWith('_COUNT')), `an amount cap refused (saw ${kinds.join(', ')})`);
    assert.ok(kinds.some((k) => k.endsWith('_COUNT')), `a count cap refused (saw ${kinds.join(', ')})`);
    if (process.env.PROPERTY_RUNS) console.log(Object.fromEntries(seen));
  });

  it('negative control: an oracle that forgets to give usage back disagrees with the service', async () => {
    // The comparison is not vacuous: a model without D32's give-back is caught on the first reversal.
    class Forgetful extends VelocityOracle {
      override giveBack(_tx: OracleTransaction, _cents: number, _count: number): void {}
    }
    const employee = await approvedEmployee(client, world.org.organizationId);
    const card = await issueCard(svc, { ...world, employee });
    const oracle = new Forgetful();
    const tx: OracleTransaction = {
      card: { cardId: card.cardId, employeeId: employee.customerId }, control: 'PURCHASE', currency: 'USD', mcc: '5814', country: 'HK',
      billingCents: 1250, billingCurrency: 'USD', at: new Date(svc.clock.now()),
    };
    const t = await client.sandbox.authorize({ cardId: card.cardId, amount: decimal('12.50'), currency: 'USD', merchantName: 'Oracle Shop', mcc: '5814', merchantCountry: 'HK', channel: 'POS' });
    assert.equal(t.approved, true);
    oracle.record(tx);
    await client.sandbox.reverse({ transId: t.transId, amount: decimal('12.50') });
    oracle.giveBack(tx, 1250, 1);
    assert.notDeepEqual(await usageFigures('CARD', card.cardId), expectedFigures(oracle, 'CARD', card.cardId, new Date(svc.clock.now())));
  });
});
