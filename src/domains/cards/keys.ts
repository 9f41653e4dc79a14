import { activeCardKey, listCardKeys, rotateCardKey } from '../../platform/crypto/card-keys.ts';
import { resealCardData } from './card-data.ts';
import { ensureCardsReady, type CardDeps } from './profiles.ts';
import { countCardsNotUnderKey, lockCardsNotUnderKey, setCardData } from './store.ts';

/** Operators: card key inventory (ids, purposes, check values; never key material). */
export async function cardKeyInventory(deps: CardDeps) {
  await ensureCardsReady(deps);
  return listCardKeys(deps.db);
}

/** Operators: a new active PAN_DATA key; existing cards stay readable under the retired one. */
export async function rotatePanDataKey(deps: CardDeps) {
  await ensureCardsReady(deps);
  const keyId = await deps.db.tx((q) => rotateCardKey(q, deps.config.masterKey, 'PAN_DATA', new Date(deps.clock.now())));
  return { keyId };
}

/**
 * Operators: re-seals up to `limit` cards still under a retired PAN_DATA key with the active one
 * (repeat until `remaining` is 0; then the old key can be destroyed). Safe on several instances.
 */
export async function reencryptCardData(deps: CardDeps, limit: number) {
  await ensureCardsReady(deps);
  return deps.db.tx(async (q) => {
    const active = await activeCardKey(q, deps.config.masterKey, 'PAN_DATA');
    const rows = await lockCardsNotUnderKey(q, active.keyId, limit);
    for (const row of rows) {
      const sealed = await resealCardData(q, deps.config.masterKey, row);
      await setCardData(q, row.cardId, sealed.panKeyId, sealed.panEnc);
    }
    const remaining = await countCardsNotUnderKey(q, active.keyId);
    return { reencrypted: rows.length, remaining, activeKeyId: active.keyId };
  });
}
