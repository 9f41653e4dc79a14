/**
 * The service's own RSA-2048 key pairs (D37): one ACTIVE key signs forwarded authorizations and is
 * the key partners encrypt their answers with; after a rotation the previous key is RETIRED but
 * still decrypts answers to requests it signed. Private keys are stored only sealed under the
 * master key. The key comes from configuration (SERVICE_RSA_PRIVATE_KEY) or is generated at first
 * start; several instances starting at once agree on one (a unique index allows one ACTIVE key).
 */
import { createHash, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { Config } from '../../config.ts';
import type { Clock } from '../../platform/clock.ts';
import { seal, unseal } from '../../platform/crypto/secrets.ts';
import { privateKeyFromPkcs8, publicKeyBase64 } from '../../platform/crypto/rsa.ts';
import type { Db } from '../../platform/db/db.ts';
import { invariant } from '../../platform/errors.ts';
import {
  findActiveServiceKey, findServiceKey, insertActiveKeyIfNone, listServiceKeys, replaceActiveKey, type ServiceKeyRow,
} from './forwarding-store.ts';

export interface ServiceKey {
  keyId: string;
  privateKey: KeyObject;
  publicKeyBase64: string;
  status: 'ACTIVE' | 'RETIRED';
}

/** Another instance's rotation reaches this one within this time. */
const ACTIVE_KEY_CACHE_MS = 5_000;
const SEAL_CONTEXT = 'service-rsa-key';

/** Key id: a short fingerprint of the public key, the same on every instance. */
function keyIdOf(publicKeyB64: string): string {
  return `sk-${createHash('sha256').update(publicKeyB64).digest('hex').slice(0, 16)}`;
}

export class ServiceKeys {
  private readonly byId = new Map<string, ServiceKey>();
  private active: { key: ServiceKey; until: number } | null = null;

  constructor(private readonly deps: { db: Db; config: Config; clock: Clock }) {}

  private newRow(privateKey: KeyObject): Omit<ServiceKeyRow, 'status' | 'retiredAt'> {
    const publicKey = publicKeyBase64(privateKey);
    const der = privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
    return { keyId: keyIdOf(publicKey), publicKey, privateKeyEnc: seal(this.deps.config.masterKey, der, SEAL_CONTEXT), createdAt: new Date(this.deps.clock.now()) };
  }

  private load(row: ServiceKeyRow): ServiceKey {
    const cached = this.byId.get(row.keyId);
    if (cached && cached.status === row.status) return cached;
    const privateKey = privateKeyFromPkcs8(Buffer.from(unseal(this.deps.config.masterKey, row.privateKeyEnc, SEAL_CONTEXT), 'base64'));
    invariant(publicKeyBase64(privateKey) === row.publicKey, `service key ${row.keyId} opens to its public key`);
    const key = { keyId: row.keyId, privateKey, publicKeyBase64: row.publicKey, status: row.status };
    this.byId.set(row.keyId, key);
    return key;
  }

  /** At start: the configured key, or a generated one when no key is active yet. */
  async ensure(): Promise<ServiceKey> {
    const configured = this.deps.config.serviceRsaPrivateKey;
    const existing = await findActiveServiceKey(this.deps.db);
    if (configured) {
      const row = this.newRow(privateKeyFromPkcs8(configured));
      if (existing?.keyId === row.keyId) return this.activeKey();
      if (!existing) await insertActiveKeyIfNone(this.deps.db, row);
      else if (!(await findServiceKey(this.deps.db, row.keyId))) await this.deps.db.tx((q) => replaceActiveKey(q, row));
    } else if (!existing) {
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      await insertActiveKeyIfNone(this.deps.db, this.newRow(privateKey));
    }
    this.active = null;
    return this.activeKey();
  }

  async activeKey(): Promise<ServiceKey> {
    if (this.active && this.active.until > Date.now()) return this.active.key;
    let row = await findActiveServiceKey(this.deps.db);
    if (!row) {
      await this.ensure();
      row = await findActiveServiceKey(this.deps.db);
    }
    invariant(row, 'a service RSA key is active');
    const key = this.load(row);
    this.active = { key, until: Date.now() + ACTIVE_KEY_CACHE_MS };
    return key;
  }

  /** A key by id, ACTIVE or RETIRED (answers to requests it signed). */
  async key(keyId: string): Promise<ServiceKey | null> {
    const cached = this.byId.get(keyId);
    if (cached) return cached;
    const row = await findServiceKey(this.deps.db, keyId);
    return row ? this.load(row) : null;
  }

  /** Operators: a new ACTIVE key; the previous one retires and keeps answering requests in flight. */
  async rotate(): Promise<ServiceKey> {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const row = this.newRow(privateKey);
    await this.deps.db.tx((q) => replaceActiveKey(q, row));
    this.active = null;
    for (const k of this.byId.values()) k.status = 'RETIRED';
    return this.activeKey();
  }

  async list() {
    return (await listServiceKeys(this.deps.db)).map((r) => ({
      keyId: r.keyId, publicKey: r.publicKey, status: r.status, algorithm: 'RSA-2048',
      createTime: r.createdAt.toISOString(), retireTime: r.retiredAt ? r.retiredAt.toISOString() : null,
    }));
  }
}
