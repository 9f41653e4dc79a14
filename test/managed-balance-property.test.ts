import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { CardServiceError, decimal, decimalText, type CardServiceClient } from '../sdk/index.ts';
import { closeTestDatabase, startService, type TestService } from './helpers/service.ts';
import { changedTables, snapshotTables } from './helpers/table-snapshot.ts';

/**
 * A property test of the managed-balance ledger (2.3, 2.4; D4, D32-D35): random sequences of
 * credit, debit, conversion, capability freezes, consumer card authorization, clearing (equal,
 * smaller, larger than the hold), reversal (part or all), refund and card fee on two users and three
 * assets, against a model kept in BigInt units of 10^-18, checking after every step every balance
 * object (`free`, `freeze`, `total`) of both users and the ledger audit. Everything goes through the
 * signed API (the card messages through the sandbox simulations, which run the network's engine).
 * Every refused step is framed by snapshots of every table of the schema, which must not differ
 * (issue 26), and refusals for users never seen (a used externalTranId, nothing to debit) are mixed in.
 *
 * Fixed seed by default. PROPERTY_RUNS=n runs n sequences of up to 24 commands, PROPERTY_SEED=s
 * another seed. A failure prints the shrunk command sequence and what the service answered.
 */

const RUNS = process.env.PROPERTY_RUNS ? Number(process.env.PROPERTY_RUNS) : 24;
const MAX_COMMANDS = process.env.PROPERTY_RUNS ? 24 : 14;
const SEED = process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : 11;

// ---------------------------------------------------------------------------------------------
// Exact amounts: BigInt units of 10^-18

const ONE = 10n ** 18n;

function units(text: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  assert.ok(m, `not a decimal: ${text}`);
  const frac = (m[3] ?? '').replace(/0+$/, '');
  assert.ok(frac.length <= 18, `more than 18 decimals: ${text}`);
  const v = BigInt(m[2]) * ONE + BigInt(frac.padEnd(18, '0') || '0');
  return m[1] === '-' ? -v : v;
}

function text(u: bigint): string {
  const neg = u < 0n;
  const abs = neg ? -u : u;
  const frac = (abs % ONE).toString().padStart(18, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${abs / ONE}${frac ? `.${frac}` : ''}`;
}

const unitsOf = (value: unknown): bigint => units(decimalText(value));

// ---------------------------------------------------------------------------------------------
// Assets of the runs: two USD-pegged with 18 decimals, one with 8 decimals at an operator rate.

/** A test asset that is not USD-pegged: 1 USD buys 0.0000213 of it (D35: operator-set rate; a cent is 0.000000213, below its 8 decimals). */
const XBT = { asset: 'PXBT', scale: 8, usdRate: '0.0000213' };
const ASSETS = ['USDT', 'USDC', XBT.asset] as const;
type Asset = (typeof ASSETS)[number];
const SCALE: Record<Asset, number> = { USDT: 18, USDC: 18, [XBT.asset]: XBT.scale } as Record<Asset, number>;
/** Units of the asset one USD buys, as a fraction (numerator, denominator). */
const RATE: Record<Asset, [bigint, bigint]> = { USDT: [1n, 1n], USDC: [1n, 1n], [XBT.asset]: [213n, 10_000_000n] } as Record<Asset, [bigint, bigint]>;

/** `amount` of `from` in `to`, rounded down to `to`'s scale (what movements.ts convert() does). */
function converted(amount: bigint, from: Asset, to: Asset): bigint {
  const [fn, fd] = RATE[from];
  const [tn, td] = RATE[to];
  // amount * (tn/td) / (fn/fd)
  const exact = (amount * tn * fd) / (td * fn);
  const step = 10n ** BigInt(18 - SCALE[to]);
  return (exact / step) * step;
}

// ---------------------------------------------------------------------------------------------
// Commands

type UserKey = 0 | 1;
/** What a debit or conversion takes: a fixed amount, a part (per million) of the current free, all of it, or one step more. */
type Amount = { kind: 'units'; units: bigint } | { kind: 'part'; ppm: number } | { kind: 'all' } | { kind: 'over' };
type Command =
  | { op: 'credit'; user: UserKey; asset: Asset; units: bigint }
  | { op: 'debit'; user: UserKey; asset: Asset; amount: Amount }
  | { op: 'convert'; user: UserKey; from: Asset; to: Asset; amount: Amount }
  | { op: 'freeze'; user: UserKey; code: 'CASH_IN_FROZEN' | 'CASH_OUT_FROZEN'; on: boolean }
  | { op: 'authorize'; user: UserKey; cents: number }
  | { op: 'clear'; auth: number; how: 'equal' | 'less' | 'more'; cents: number; ppm: number }
  | { op: 'reverse'; auth: number; ppm: number | null }
  | { op: 'refund'; user: UserKey; cents: number }
  | { op: 'fee'; user: UserKey }
  /** A movement that must be refused: a used externalTranId, or (a user never seen, `user` null) nothing to take. */
  | { op: 'refused'; user: UserKey | null; what: 'credit' | 'debit' | 'convert'; asset: Asset; reuse: boolean };

/** Each user's consumer card spends one asset (D35): user 0 a USD-pegged one 1:1, user 1 the 8-decimal asset at its rate. */
const CARD_ASSET: Record<UserKey, Asset> = { 0: 'USDT', 1: XBT.asset } as Record<UserKey, Asset>;

/** USD (units of 10^-18) in a card's asset at its rate, to the asset's scale: up for holds, clearings and fees, down for refunds. */
function inAsset(usd: bigint, a: Asset, up: boolean): bigint {
  const [n, d] = RATE[a];
  const unit = 10n ** BigInt(18 - SCALE[a]);
  const q = (usd * n) / (d * unit);
  const exact = (usd * n) % (d * unit) === 0n;
  return (up && !exact ? q + 1n : q) * unit;
}
/** CARD_PRINTING_FEE of the fee profile, charged at apply. */
const FEE = 150n * 10n ** 16n;
const CENT = 10n ** 16n;
const cents = fc.integer({ min: 1, max: 5000 });

const userKey = fc.constantFrom<UserKey>(0, 1);
const asset = fc.constantFrom<Asset>(...ASSETS);
/** Amounts from 10^-18 to 10^4, mostly with few significant digits (cents), sometimes all 18 decimals. */
const rawUnits = fc.oneof(
  fc.integer({ min: 1, max: 500_000 }).map((c) => BigInt(c) * 10n ** 16n),
  fc.bigInt({ min: 1n, max: 10_000n * ONE }),
);
const amount: fc.Arbitrary<Amount> = fc.oneof(
  { weight: 2, arbitrary: rawUnits.map((u) => ({ kind: 'units' as const, units: u })) },
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 999_999 }).map((ppm) => ({ kind: 'part' as const, ppm })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'all' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'over' as const }) },
);
const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('credit' as const), user: userKey, asset, units: rawUnits }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('debit' as const), user: userKey, asset, amount }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('convert' as const), user: userKey, from: asset, to: asset, amount }).filter((c) => c.from !== c.to) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('freeze' as const), user: userKey, code: fc.constantFrom('CASH_IN_FROZEN' as const, 'CASH_OUT_FROZEN' as const), on: fc.boolean() }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('authorize' as const), user: userKey, cents }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('clear' as const), auth: fc.nat(), how: fc.constantFrom('equal' as const, 'less' as const, 'more' as const), cents, ppm: fc.integer({ min: 1, max: 999_999 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('reverse' as const), auth: fc.nat(), ppm: fc.option(fc.integer({ min: 1, max: 999_999 })) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('refund' as const), user: userKey, cents }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('fee' as const), user: userKey }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('refused' as const), user: fc.option(userKey, { freq: 2 }), what: fc.constantFrom('credit' as const, 'debit' as const, 'convert' as const), asset, reuse: fc.boolean() }) },
);

/** The asset's own precision: amounts of PXBT are cut to 8 decimals (a finer amount is a parameter error, tested elsewhere). */
const fit = (u: bigint, a: Asset): bigint => {
  const step = 10n ** BigInt(18 - SCALE[a]);
  return (u / step) * step;
};

// ---------------------------------------------------------------------------------------------
// The model

interface ModelAuth {
  transId: string;
  user: UserKey;
  /** In USD, as the record keeps it. */
  hold: bigint;
  /** In the card's asset. */
  fundsHold: bigint;
  status: 'PENDING' | 'CLEARED' | 'REVERSED';
}

class Model {
  free = new Map<string, bigint>();
  held = new Map<string, bigint>();
  frozen = new Set<string>();
  auths: ModelAuth[] = [];

  heldOf(user: UserKey, a: Asset): bigint {
    return this.held.get(`${user}|${a}`) ?? 0n;
  }
  hold(user: UserKey, delta: bigint): void {
    const key = `${user}|${CARD_ASSET[user]}`;
    this.held.set(key, this.heldOf(user, CARD_ASSET[user]) + delta);
  }

  get(user: UserKey, a: Asset): bigint {
    return this.free.get(`${user}|${a}`) ?? 0n;
  }
  add(user: UserKey, a: Asset, delta: bigint): void {
    this.free.set(`${user}|${a}`, this.get(user, a) + delta);
  }
  /** The amount a command means for this user's balance now. */
  resolve(user: UserKey, a: Asset, amt: Amount): bigint {
    if (amt.kind === 'all') return this.get(user, a);
    if (amt.kind === 'over') return this.get(user, a) + 10n ** BigInt(18 - SCALE[a]);
    if (amt.kind === 'part') return fit((this.get(user, a) * BigInt(amt.ppm)) / 1_000_000n, a);
    return fit(amt.units, a);
  }
}

async function outcome<T>(call: Promise<T>): Promise<{ code: null; value: T } | { code: string; value: null }> {
  try {
    return { code: null, value: await call };
  } catch (err) {
    if (err instanceof CardServiceError) return { code: err.code, value: null };
    throw err;
  }
}

describe('managed-balance ledger against a model (property, fast-check)', () => {
  let svc: TestService;
  let client: CardServiceClient;
  let partnerId: string;
  let feeProfileId: string;
  before(async () => {
    svc = await startService();
    const p = await svc.newPartner();
    client = p.client;
    partnerId = p.partner.partnerId;
    const profile = await svc.admin.call<{ cardProfileId: string }>('POST', '/internal/admin/v1/card-profiles', {
      body: {
        partnerId, profileName: 'Property fee card', cardNetwork: 'VISA', cardForm: 'VIRTUAL', balanceMode: 'ASSET', settlementCurrencies: ['USD'],
        bin: '462268', fees: { issuanceFee: decimal(text(FEE)) },
      },
    });
    feeProfileId = profile.cardProfileId;
    await svc.admin.upsertAsset({ asset: XBT.asset, network: 'TEST', logo: 'https://assets.example/pxbt.svg', scale: XBT.scale, usdPegged: false, usdRate: decimal(XBT.usdRate), status: 'ACTIVE' });
  });
  after(async () => {
    await svc.close();
    await closeTestDatabase();
  });

  async function checkAll(users: [string, string], model: Model): Promise<void> {
    for (const k of [0, 1] as const) {
      const list = await client.userAssets.balance(users[k]);
      for (const a of ASSETS) {
        const b = list.find((x) => x.asset === a);
        assert.ok(b, `user ${k} has a ${a} balance object`);
        const expected = model.get(k, a);
        const held = model.heldOf(k, a);
        assert.deepEqual({ free: unitsOf(b.free), freeze: unitsOf(b.freeze), total: unitsOf(b.total) },
          { free: expected, freeze: held, total: expected + held }, `user ${k} ${a}`);
      }
    }
    const report = await svc.admin.call<{ ok: boolean; findings: unknown[] }>('GET', '/internal/admin/v1/ledger/audit', { query: { partnerId } });
    assert.deepEqual(report.findings, [], 'ledger audit findings');
  }

  async function step(users: [string, string], cards: [string, string], model: Model, cmd: Command, booked: string[]): Promise<string> {
    const externalTranId = `p-${randomBytes(8).toString('hex')}`;
    const externalUserId = 'user' in cmd && cmd.user !== null ? users[cmd.user] : '';
    switch (cmd.op) {
      case 'credit': {
        const amt = fit(cmd.units, cmd.asset);
        if (amt === 0n) return 'skipped (below the asset scale)';
        const expected = model.frozen.has(`${cmd.user}|CASH_IN_FROZEN`) ? 'CAPABILITY_FROZEN' : null;
        const r = await outcome(client.userAssets.credit({ externalTranId, externalUserId, asset: cmd.asset, amount: decimal(text(amt)) }));
        assert.equal(r.code, expected, `credit ${text(amt)} ${cmd.asset}`);
        if (r.value) {
          assert.equal(unitsOf(r.value.amount), amt);
          assert.equal(unitsOf(r.value.freeAfter), model.get(cmd.user, cmd.asset) + amt);
          booked.push(externalTranId);
        }
        if (expected === null) model.add(cmd.user, cmd.asset, amt);
        return r.code ?? 'ok';
      }
      case 'debit': {
        const amt = model.resolve(cmd.user, cmd.asset, cmd.amount);
        if (amt <= 0n) return 'skipped (nothing to debit)';
        const expected = model.frozen.has(`${cmd.user}|CASH_OUT_FROZEN`) ? 'CAPABILITY_FROZEN'
          : amt > model.get(cmd.user, cmd.asset) ? 'INSUFFICIENT_BALANCE' : null;
        const r = await outcome(client.userAssets.debit({ externalTranId, externalUserId, asset: cmd.asset, amount: decimal(text(amt)) }));
        assert.equal(r.code, expected, `debit ${text(amt)} ${cmd.asset}`);
        if (r.value) booked.push(externalTranId);
        if (expected === null) model.add(cmd.user, cmd.asset, -amt);
        return r.code ?? 'ok';
      }
      case 'convert': {
        const amt = model.resolve(cmd.user, cmd.from, cmd.amount);
        if (amt <= 0n) return 'skipped (nothing to convert)';
        const counter = converted(amt, cmd.from, cmd.to);
        const expected = counter === 0n ? 'DAPI_PARAM_INVALID'
          : model.frozen.has(`${cmd.user}|CASH_OUT_FROZEN`) ? 'CAPABILITY_FROZEN'
          : amt > model.get(cmd.user, cmd.from) ? 'INSUFFICIENT_BALANCE' : null;
        const r = await outcome(client.userAssets.convert({ externalTranId, externalUserId, fromAsset: cmd.from, toAsset: cmd.to, amount: decimal(text(amt)) }));
        assert.equal(r.code, expected, `convert ${text(amt)} ${cmd.from} -> ${cmd.to} (${text(counter)})`);
        if (r.value) {
          assert.equal(unitsOf(r.value.counterAmount), counter);
          booked.push(externalTranId);
        }
        if (expected === null) {
          model.add(cmd.user, cmd.from, -amt);
          model.add(cmd.user, cmd.to, counter);
        }
        return r.code ?? `ok ${text(counter)} ${cmd.to}`;
      }
      case 'freeze': {
        await svc.admin.setUserRestrictions({
          partnerId, externalUserId, ...(cmd.on ? { addRestrictions: [cmd.code] } : { removeRestrictions: [cmd.code] }),
        });
        if (cmd.on) model.frozen.add(`${cmd.user}|${cmd.code}`);
        else model.frozen.delete(`${cmd.user}|${cmd.code}`);
        return 'ok';
      }
      case 'authorize': {
        const amt = BigInt(cmd.cents) * CENT;
        const funds = inAsset(amt, CARD_ASSET[cmd.user], true);
        const approve = funds <= model.get(cmd.user, CARD_ASSET[cmd.user]);
        const t = await client.sandbox.authorize({
          cardId: cards[cmd.user], amount: decimal(text(amt)), currency: 'USD', merchantName: 'Property shop', mcc: '5411', merchantCountry: 'SG', channel: 'POS',
        });
        assert.equal(t.approved, approve, `authorization of ${text(amt)} (${t.declineReason})`);
        if (!approve) {
          assert.equal(t.declineReason, 'INSUFFICIENT_BALANCE');
          return 'declined';
        }
        model.add(cmd.user, CARD_ASSET[cmd.user], -funds);
        model.hold(cmd.user, funds);
        model.auths.push({ transId: t.transId, user: cmd.user, hold: amt, fundsHold: funds, status: 'PENDING' });
        return 'ok';
      }
      case 'clear': {
        if (model.auths.length === 0) return 'skipped (no authorization)';
        const auth = model.auths[cmd.auth % model.auths.length];
        const final = cmd.how === 'more' || auth.hold === 0n ? auth.hold + BigInt(cmd.cents) * CENT
          : cmd.how === 'equal' ? auth.hold : ((auth.hold * BigInt(cmd.ppm)) / 1_000_000n / CENT) * CENT;
        if (final === 0n) return 'skipped (below a cent)';
        const expected = auth.status === 'CLEARED' ? 'TRANSACTION_STATUS_INVALID' : null;
        const r = await outcome(client.sandbox.clear({ transId: auth.transId, amount: decimal(text(final)) }));
        assert.equal(r.code, expected, `clearing ${text(final)} of ${auth.transId} (${auth.status}, hold ${text(auth.hold)})`);
        if (expected !== null) return r.code!;
        // D33: the hold is released and the final amount posted (at the authorization's rate), even above free.
        model.add(auth.user, CARD_ASSET[auth.user], auth.fundsHold - inAsset(final, CARD_ASSET[auth.user], true));
        model.hold(auth.user, -auth.fundsHold);
        auth.hold = 0n;
        auth.fundsHold = 0n;
        auth.status = 'CLEARED';
        return 'ok';
      }
      case 'reverse': {
        if (model.auths.length === 0) return 'skipped (no authorization)';
        const auth = model.auths[cmd.auth % model.auths.length];
        const amt = cmd.ppm === null ? auth.hold : ((auth.hold * BigInt(cmd.ppm)) / 1_000_000n / CENT) * CENT;
        const sent = amt === 0n ? CENT : amt;
        const expected = auth.status !== 'PENDING' ? 'TRANSACTION_STATUS_INVALID' : sent > auth.hold ? 'TRANSACTION_AMOUNT_INVALID' : null;
        const r = await outcome(client.sandbox.reverse({ transId: auth.transId, amount: decimal(text(sent)) }));
        assert.equal(r.code, expected, `reversal of ${text(sent)} of ${auth.transId} (${auth.status}, hold ${text(auth.hold)})`);
        if (expected !== null) return r.code!;
        // The same share of the asset hold, rounded down; all of it with the last reversal.
        const unit = 10n ** BigInt(18 - SCALE[CARD_ASSET[auth.user]]);
        const released = sent === auth.hold ? auth.fundsHold : ((auth.fundsHold * sent) / auth.hold / unit) * unit;
        model.add(auth.user, CARD_ASSET[auth.user], released);
        model.hold(auth.user, -released);
        auth.fundsHold -= released;
        auth.hold -= sent;
        if (auth.hold === 0n) auth.status = 'REVERSED';
        return 'ok';
      }
      case 'refund': {
        const amt = BigInt(cmd.cents) * CENT;
        const t = await client.sandbox.refund({ cardId: cards[cmd.user], amount: decimal(text(amt)), currency: 'USD', merchantName: 'Property shop' });
        assert.equal(t.authType, 'REFUND');
        model.add(cmd.user, CARD_ASSET[cmd.user], inAsset(amt, CARD_ASSET[cmd.user], false));
        return 'ok';
      }
      case 'fee': {
        // A second card from the fee profile: CARD_PRINTING_FEE from free, or nothing when free is short.
        const fee = inAsset(FEE, CARD_ASSET[cmd.user], true);
        const expected = fee > model.get(cmd.user, CARD_ASSET[cmd.user]) ? 'INSUFFICIENT_BALANCE' : null;
        const r = await outcome(client.consumerCards.apply({ externalUserId, cardProfileId: feeProfileId, cardholderName: 'Prop Test', fundingAsset: CARD_ASSET[cmd.user] }));
        assert.equal(r.code, expected, `apply with a fee of ${text(FEE)}`);
        if (r.value) {
          assert.deepEqual(r.value.fees.map((f) => [f.type, unitsOf(f.amount)]), [['CARD_PRINTING_FEE', fee]]);
          model.add(cmd.user, CARD_ASSET[cmd.user], -fee);
        }
        return r.code ?? 'ok';
      }
      case 'refused': {
        // A user never seen has nothing to take; for one already seen, and for a credit, the externalTranId must be a used one.
        const reuse = cmd.reuse || cmd.user !== null || cmd.what === 'credit';
        if (reuse && booked.length === 0) return 'skipped (no externalTranId used yet)';
        const tranId = reuse ? booked[booked.length - 1] : externalTranId;
        const userId = cmd.user === null ? `pu-new-${randomBytes(5).toString('hex')}` : externalUserId;
        const blocker = cmd.what === 'credit' ? 'CASH_IN_FROZEN' : 'CASH_OUT_FROZEN';
        const expected = cmd.user !== null && model.frozen.has(`${cmd.user}|${blocker}`) ? 'CAPABILITY_FROZEN'
          : reuse ? 'EXTERNAL_TRAN_ID_DUPLICATE' : 'INSUFFICIENT_BALANCE';
        const amount = decimal('1');
        const other = ASSETS[(ASSETS.indexOf(cmd.asset) + 1) % ASSETS.length];
        const r = await outcome(cmd.what === 'convert'
          ? client.userAssets.convert({ externalTranId: tranId, externalUserId: userId, fromAsset: cmd.asset, toAsset: other, amount })
          : client.userAssets[cmd.what]({ externalTranId: tranId, externalUserId: userId, asset: cmd.asset, amount }));
        assert.equal(r.code, expected, `${cmd.what} of 1 ${cmd.asset} for ${cmd.user === null ? 'a new user' : `user ${cmd.user}`}${reuse ? ' with a used externalTranId' : ''}`);
        return r.code!;
      }
    }
  }

  it(`random credit, debit, conversion, freeze, authorize, clear, reverse, refund and fee sequences keep every balance as the model says (seed ${SEED}, ${RUNS} runs)`, async () => {
    const outcomes: Record<string, number> = {};
    let refusals = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: MAX_COMMANDS, size: 'max' }), fc.array(rawUnits, { minLength: 6, maxLength: 6 }), async (commands, funding) => {
        const users: [string, string] = [`pu-${randomBytes(5).toString('hex')}`, `pu-${randomBytes(5).toString('hex')}`];
        const model = new Model();
        const trace: string[] = [];
        // Every user starts with some of every asset, so that debits and conversions mostly have something to take.
        const prelude: Command[] = funding.map((u, i) => ({ op: 'credit' as const, user: (i % 2) as UserKey, asset: ASSETS[Math.floor(i / 2)], units: u }));
        const cards: [string, string] = ['', ''];
        const booked: string[] = [];
        try {
          for (const [n, cmd] of [...prelude, ...commands].entries()) {
            if (n === prelude.length) {
              // Each user's card (a profile without fees), once the users exist.
              for (const k of [0, 1] as const) {
                const card = await client.consumerCards.apply({ externalUserId: users[k], cardProfileId: 'sbx-visa-consumer', cardholderName: 'Prop Test', fundingAsset: CARD_ASSET[k] });
                cards[k] = card.cardId;
              }
            }
            trace.push(`#${n} ${JSON.stringify(cmd, (_k, v) => (typeof v === 'bigint' ? text(v) : v))}`);
            const before = await snapshotTables(svc.db);
            const result = await step(users, cards, model, cmd, booked);
            trace[trace.length - 1] += ` -> ${result}`;
            // A refusal (a code; a declined authorization is an answer the network gets and is recorded) changes no table.
            if (/^[A-Z_]+$/.test(result)) {
              assert.deepEqual(changedTables(before, await snapshotTables(svc.db)), [], `refused as ${result} and changed nothing`);
              refusals++;
            }
            const tally = `${cmd.op}:${result.split(' ')[0]}`;
            outcomes[tally] = (outcomes[tally] ?? 0) + 1;
            await checkAll(users, model);
          }
        } catch (err) {
          throw new Error(`${(err as Error).message}\ntrace:\n${trace.join('\n')}`);
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: false },
    );
    // The runs must reach the interesting outcomes, or the property proves little.
    for (const tally of ['credit:ok', 'debit:ok', 'debit:INSUFFICIENT_BALANCE', 'convert:ok', 'convert:INSUFFICIENT_BALANCE',
      'authorize:ok', 'authorize:declined', 'clear:ok', 'reverse:ok', 'refund:ok', 'fee:ok',
      'refused:EXTERNAL_TRAN_ID_DUPLICATE', 'refused:INSUFFICIENT_BALANCE']) {
      assert.ok((outcomes[tally] ?? 0) > 0, `some run reached ${tally} (${JSON.stringify(outcomes)})`);
    }
    assert.ok(refusals >= 10, `the runs framed refusals with table snapshots (${refusals})`);
  });
});
