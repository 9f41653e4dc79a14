import type { Config } from '../../config.ts';
import type { Clock } from '../../platform/clock.ts';
import { ensureCardKeys } from '../../platform/crypto/card-keys.ts';
import { binMatchesNetwork, DEFAULT_PAN_LENGTH } from '../../platform/crypto/pan.ts';
import { newId } from '../../platform/crypto/secrets.ts';
import { insideUnitOfWork, type Db } from '../../platform/db/db.ts';
import { ApiError, paramInvalid } from '../../platform/errors.ts';
import { CORPORATE_SCALE, fromDb, parseAmount, toDb, toWire } from '../../platform/money.ts';
import { pageOf, type Paging } from '../../platform/http/schema.ts';
import type { WireAmount } from '../../platform/http/schema.ts';
import { partnerExists } from '../partners/index.ts';
import { findCardProfile, insertCardProfile, listCardProfiles, updateCardProfile, type BalanceMode, type CardForm, type CardNetwork, type CardProfile, type NewCardProfile } from './store.ts';

export interface CardDeps {
  config: Config;
  db: Db;
  clock: Clock;
}

/** Validity of a virtual card when the operator does not say: three years, the common issuer default. */
export const DEFAULT_VALIDITY_MONTHS = 36;

/**
 * D22: sandbox starts with a shared and a dedicated virtual profile on each network (and the physical
 * profiles of D52, one per network and balance mode). Ids are fixed
 * so integration code and docs can name them; BINs are in the networks' ranges (VISA 4, MASTERCARD 5x).
 */
export const SANDBOX_PROFILES: NewCardProfile[] = [
  { cardProfileId: 'sbx-visa-shared', profileName: 'Sandbox VISA virtual, company pool', cardNetwork: 'VISA', balanceMode: 'SHARED', bin: '462263' },
  { cardProfileId: 'sbx-visa-dedicated', profileName: 'Sandbox VISA virtual, dedicated balance', cardNetwork: 'VISA', balanceMode: 'DEDICATED', bin: '462264' },
  { cardProfileId: 'sbx-mc-shared', profileName: 'Sandbox MASTERCARD virtual, company pool', cardNetwork: 'MASTERCARD', balanceMode: 'SHARED', bin: '531993' },
  { cardProfileId: 'sbx-mc-dedicated', profileName: 'Sandbox MASTERCARD virtual, dedicated balance', cardNetwork: 'MASTERCARD', balanceMode: 'DEDICATED', bin: '531994' },
  { cardProfileId: 'sbx-visa-consumer', profileName: 'Sandbox VISA virtual consumer card, user asset', cardNetwork: 'VISA', balanceMode: 'ASSET', bin: '462265' },
  { cardProfileId: 'sbx-mc-consumer', profileName: 'Sandbox MASTERCARD virtual consumer card, user asset', cardNetwork: 'MASTERCARD', balanceMode: 'ASSET', bin: '531995' },
  // Targets of the physical upgrade (issue 30, D52), with fees so the sandbox shows them charged and refunded.
  ...(['SHARED', 'DEDICATED', 'ASSET'] as const).flatMap((mode) => (['VISA', 'MASTERCARD'] as const).map((network) => ({
    cardProfileId: `sbx-${network === 'VISA' ? 'visa' : 'mc'}-${mode === 'ASSET' ? 'consumer' : mode.toLowerCase()}-physical`,
    profileName: `Sandbox ${network} physical card, ${mode === 'SHARED' ? 'company pool' : mode === 'DEDICATED' ? 'dedicated balance' : 'user asset'}`,
    cardNetwork: network, balanceMode: mode, bin: network === 'VISA' ? '462266' : '531996', cardForm: 'PHYSICAL' as CardForm,
    issuanceFee: '5.00', postalFee: '2.50',
  }))),
].map((p) => ({
  issuanceFee: '0',
  postalFee: '0',
  cardForm: 'VIRTUAL' as CardForm,
  ...p,
  cardNetwork: p.cardNetwork as CardNetwork,
  balanceMode: p.balanceMode as BalanceMode,
  partnerId: null,
  // The consumer (ASSET) family bills in USD only (migration 083): its funding assets are USD-pegged.
  settlementCurrencies: p.balanceMode === 'ASSET' ? ['USD'] : ['USD', 'HKD'],
  panLength: DEFAULT_PAN_LENGTH,
  validityMonths: DEFAULT_VALIDITY_MONTHS,
  monthlyFee: '0',
  frozenFee: '0',
  status: 'ACTIVE' as const,
}));

const seeded = new WeakMap<Db, Promise<void>>();

/**
 * Everything cards need before a business transaction: the card keys (D26) and, in sandbox, the
 * seed profiles (D22). Idempotent and safe on several instances; runs once per process.
 */
export async function ensureCardsReady(deps: CardDeps): Promise<void> {
  const now = new Date(deps.clock.now());
  await ensureCardKeys(deps.db, deps.config, now);
  if (deps.config.env !== 'sandbox') return;
  let done = seeded.get(deps.db);
  if (!done) {
    // An audited admin action's unit of work may still be rolled back: seed in it, remember nothing.
    if (insideUnitOfWork()) {
      for (const profile of SANDBOX_PROFILES) await insertCardProfile(deps.db, profile, now);
      return;
    }
    done = (async () => {
      for (const profile of SANDBOX_PROFILES) await insertCardProfile(deps.db, profile, now);
    })();
    seeded.set(deps.db, done);
    done.catch(() => seeded.delete(deps.db));
  }
  await done;
}

export function profileView(p: CardProfile) {
  return {
    cardProfileId: p.cardProfileId,
    profileName: p.profileName,
    cardNetwork: p.cardNetwork,
    cardForm: p.cardForm,
    balanceMode: p.balanceMode,
    settlementCurrencies: p.settlementCurrencies,
    fees: { issuanceFee: toWire(p.issuanceFee), monthlyFee: toWire(p.monthlyFee), postalFee: toWire(p.postalFee), frozenFee: toWire(p.frozenFee) },
    status: p.status,
  };
}

export function adminProfileView(p: CardProfile) {
  return {
    ...profileView(p),
    partnerId: p.partnerId,
    bin: p.bin,
    panLength: p.panLength,
    validityMonths: p.validityMonths,
    createTime: p.createdAt.toISOString(),
    modifyTime: p.updatedAt.toISOString(),
  };
}

const FEE_RULES = { maxScale: CORPORATE_SCALE, sign: 'nonNegative' } as const;

/** A new profile as operators describe it: the row's fields, some optional (defaults below), fees as wire amounts. */
export type CreateProfileInput = Pick<NewCardProfile, 'profileName' | 'cardNetwork' | 'cardForm' | 'balanceMode' | 'settlementCurrencies' | 'bin'>
  & Partial<Pick<NewCardProfile, 'cardProfileId' | 'partnerId' | 'panLength' | 'validityMonths' | 'status'>>
  & { fees?: ProfileFeesInput };

/** Fees of a profile as operators give them; postalFee and frozenFee apply to consumer (ASSET) profiles only. */
export interface ProfileFeesInput {
  issuanceFee?: WireAmount;
  monthlyFee?: WireAmount;
  postalFee?: WireAmount;
  frozenFee?: WireAmount;
}

function feeOf(fees: ProfileFeesInput | undefined, name: keyof ProfileFeesInput, current: string): string {
  const value = fees?.[name];
  return value === undefined ? current : toDb(parseAmount(`fees.${name}`, value, FEE_RULES));
}

/**
 * Fees a profile would never charge are refused rather than ignored: frozenFee on corporate
 * profiles; postalFee on corporate VIRTUAL profiles (D52: any PHYSICAL profile may have one).
 */
function checkFeesFit(profile: { balanceMode: BalanceMode; cardForm: CardForm }, postalFee: string, frozenFee: string): void {
  if (profile.balanceMode === 'ASSET') return;
  if (profile.cardForm !== 'PHYSICAL' && !fromDb(postalFee).isZero()) {
    throw paramInvalid('fees.postalFee', 'applies to PHYSICAL and consumer (ASSET) profiles only');
  }
  if (!fromDb(frozenFee).isZero()) throw paramInvalid('fees.frozenFee', 'applies to consumer (ASSET) profiles only');
}

/** D22: operators create profiles; the BIN must be in the network's range. */
export async function createCardProfile(deps: CardDeps, input: CreateProfileInput) {
  await ensureCardsReady(deps);
  if (new Set(input.settlementCurrencies).size !== input.settlementCurrencies.length) {
    throw paramInvalid('settlementCurrencies', 'must not contain duplicates');
  }
  if (!binMatchesNetwork(input.bin, input.cardNetwork)) throw paramInvalid('bin', `is not in the ${input.cardNetwork} range`);
  const panLength = input.panLength ?? DEFAULT_PAN_LENGTH;
  if (panLength - input.bin.length < 7) throw paramInvalid('panLength', 'must leave at least 6 account digits after the BIN');
  if (input.balanceMode === 'ASSET' && (input.settlementCurrencies.length !== 1 || input.settlementCurrencies[0] !== 'USD')) {
    throw paramInvalid('settlementCurrencies', 'a consumer (ASSET) profile settles in ["USD"] only: its funding assets are USD-pegged');
  }
  const issuanceFee = feeOf(input.fees, 'issuanceFee', '0');
  const monthlyFee = feeOf(input.fees, 'monthlyFee', '0');
  const postalFee = feeOf(input.fees, 'postalFee', '0');
  const frozenFee = feeOf(input.fees, 'frozenFee', '0');
  checkFeesFit(input, postalFee, frozenFee);
  const now = new Date(deps.clock.now());
  return deps.db.tx(async (q) => {
    if (input.partnerId) {
      if (!(await partnerExists(q, input.partnerId))) throw new ApiError('PARTNER_INVALID');
    }
    const profile: NewCardProfile = {
      cardProfileId: input.cardProfileId ?? newId('cp'),
      partnerId: input.partnerId ?? null,
      profileName: input.profileName,
      cardNetwork: input.cardNetwork,
      cardForm: input.cardForm,
      balanceMode: input.balanceMode,
      settlementCurrencies: input.settlementCurrencies,
      bin: input.bin,
      panLength,
      validityMonths: input.validityMonths ?? DEFAULT_VALIDITY_MONTHS,
      issuanceFee,
      monthlyFee,
      postalFee,
      frozenFee,
      status: input.status ?? 'ACTIVE',
    };
    if (!(await insertCardProfile(q, profile, now))) throw paramInvalid('cardProfileId', 'is already used');
    return adminProfileView((await findCardProfile(q, profile.cardProfileId))!);
  });
}

export async function updateCardProfileSettings(
  deps: CardDeps,
  input: { cardProfileId: string; profileName?: string; status?: 'ACTIVE' | 'INACTIVE'; fees?: ProfileFeesInput },
) {
  await ensureCardsReady(deps);
  const now = new Date(deps.clock.now());
  return deps.db.tx(async (q) => {
    const current = await findCardProfile(q, input.cardProfileId, true);
    if (!current) throw new ApiError('CARD_PROFILE_INVALID');
    const fees = {
      issuanceFee: feeOf(input.fees, 'issuanceFee', current.issuanceFee),
      monthlyFee: feeOf(input.fees, 'monthlyFee', current.monthlyFee),
      postalFee: feeOf(input.fees, 'postalFee', current.postalFee),
      frozenFee: feeOf(input.fees, 'frozenFee', current.frozenFee),
    };
    checkFeesFit(current, fees.postalFee, fees.frozenFee);
    const updated = await updateCardProfile(q, current.cardProfileId, {
      profileName: input.profileName ?? current.profileName,
      status: input.status ?? current.status,
      ...fees,
    }, now);
    return adminProfileView(updated);
  });
}

export async function listProfilesForOperator(deps: CardDeps, paging: Paging) {
  await ensureCardsReady(deps);
  const { total, rows } = await listCardProfiles(deps.db, { partnerId: null }, paging.pageSize, (paging.page - 1) * paging.pageSize);
  return pageOf(paging, total, rows.map(adminProfileView));
}

/** The balance modes of each card family (D53): corporate apply takes SHARED and DEDICATED profiles, /card/v2/apply ASSET ones. */
export const PROFILE_FAMILIES = { CORPORATE: ['SHARED', 'DEDICATED'], CONSUMER: ['ASSET'] } as const satisfies Record<string, readonly BalanceMode[]>;

/**
 * D22, D48: the profiles offered to the partner (shared ones and its own) of one family (D53): the
 * corporate list shows only what corporate apply accepts, the consumer list only ASSET profiles.
 */
export async function listProfilesForPartner(
  deps: CardDeps,
  partnerId: string,
  family: keyof typeof PROFILE_FAMILIES,
  filter: { cardNetwork?: string; balanceMode?: string; status?: string },
  paging: Paging,
) {
  await ensureCardsReady(deps);
  const { total, rows } = await listCardProfiles(deps.db, { partnerId, ...filter, balanceModes: PROFILE_FAMILIES[family] },
    paging.pageSize, (paging.page - 1) * paging.pageSize);
  return pageOf(paging, total, rows.map(profileView));
}
