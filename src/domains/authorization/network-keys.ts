/**
 * Credentials of the card network ingress (/internal/network/v1/): issued by operators, never a
 * partner's. A network call is signed exactly as a partner call (5.3) with the network key, from an
 * address on the key's IP list (empty = any in sandbox, none in production, like partners: D13).
 */
import type { Config } from '../../config.ts';
import type { Clock } from '../../platform/clock.ts';
import { newApiKey, newId, newSecretKey, seal, unseal } from '../../platform/crypto/secrets.ts';
import type { Db } from '../../platform/db/db.ts';
import { ApiError, paramInvalid } from '../../platform/errors.ts';
import { ipAllowed, isValidWhitelistEntry } from '../../platform/http/ip.ts';
import { API_KEY_FORMAT, verifySignedRequest, type SignedRequest } from '../../platform/http/signed-request.ts';
import { newReplayGuard, throwUnlessNew, type ReplayGuard } from '../partners/index.ts';
import { findNetworkKeyByApiKey, insertNetworkKey, listNetworkKeys, revokeNetworkKey, type NetworkKeyRow } from './store.ts';

export interface NetworkCaller {
  networkKeyId: string;
  name: string;
}

const secretContext = (networkKeyId: string) => `network-secret:${networkKeyId}`;

function keyView(k: NetworkKeyRow) {
  return { networkKeyId: k.networkKeyId, name: k.name, apiKey: k.apiKey, ipAllowlist: k.ipAllowlist, status: k.status, createTime: k.createdAt.toISOString() };
}

/** Operator: a new network key; the secret is shown once, in this answer only. */
export async function createNetworkKey(deps: { db: Db; config: Config; clock: Clock }, input: { name: string; ipAllowlist?: string[] }) {
  const ipAllowlist = input.ipAllowlist ?? [];
  const bad = ipAllowlist.find((e) => !isValidWhitelistEntry(e));
  if (bad !== undefined) throw paramInvalid('ipAllowlist', `${bad} is not an IP address or CIDR range`);
  const networkKeyId = newId('nk');
  const apiKey = newApiKey();
  const secretKey = newSecretKey();
  const createdAt = new Date(deps.clock.now());
  await insertNetworkKey(deps.db, {
    networkKeyId, name: input.name, apiKey, secretKeyEnc: seal(deps.config.masterKey, secretKey, secretContext(networkKeyId)), ipAllowlist, createdAt,
  });
  return { ...keyView({ networkKeyId, name: input.name, apiKey, secretKeyEnc: '', ipAllowlist, status: 'ACTIVE', createdAt }), secretKey };
}

export async function networkKeys(deps: { db: Db }) {
  return (await listNetworkKeys(deps.db)).map(keyView);
}

export async function revokeNetworkKeyById(deps: { db: Db }, networkKeyId: string): Promise<null> {
  if (!(await revokeNetworkKey(deps.db, networkKeyId))) throw paramInvalid('networkKeyId', 'no such network key');
  return null;
}

/** D5's order with the network key: key -> IP list -> timestamp -> nonce -> signature -> replay. */
export class NetworkAuthenticator {
  private readonly replayStore: ReplayGuard;

  constructor(private readonly deps: { db: Db; config: Config; clock: Clock }) {
    this.replayStore = newReplayGuard(deps);
  }

  async authenticate(req: SignedRequest): Promise<NetworkCaller> {
    const { apiKey } = req;
    if (!apiKey || !API_KEY_FORMAT.test(apiKey)) throw new ApiError('DAPI_API_KEY_INVALID');
    const key = await findNetworkKeyByApiKey(this.deps.db, apiKey);
    if (!key || key.status !== 'ACTIVE') throw new ApiError('DAPI_API_KEY_INVALID');
    if (!ipAllowed(key.ipAllowlist, req.ip, this.deps.config.env)) throw new ApiError('DAPI_IP_NOT_ALLOWED');
    const secretKey = unseal(this.deps.config.masterKey, key.secretKeyEnc, secretContext(key.networkKeyId));
    const replayKey = verifySignedRequest({ ...req, apiKey }, secretKey, this.deps.clock.now(), this.deps.config.timestampWindowMs);
    throwUnlessNew(await this.replayStore.record(replayKey), this.deps.clock.now());
    return { networkKeyId: key.networkKeyId, name: key.name };
  }
}
