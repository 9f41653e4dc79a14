import type { AppContext } from './platform/context.ts';
import { sweepReplayStore } from './domains/partners/index.ts';
import { webhookDeliveryWorker, WEBHOOK_POLL_INTERVAL_MS } from './domains/events/index.ts';
import { CARD_APPLY_POLL_INTERVAL_MS, processCardApplications } from './domains/cards/index.ts';
import { LOW_BALANCE_SCAN_INTERVAL_MS, scanLowBalances } from './domains/funding/index.ts';

export interface Logger {
  error(obj: object, msg?: string): void;
}

/** How often expired replay-store entries are swept. */
const NONCE_SWEEP_INTERVAL_MS = 30_000;
/** Margin beyond the window, so a sweep never races a request being accepted at the edge. */
const NONCE_SWEEP_MARGIN_MS = 60_000;

/** Background loops of this instance; every one is safe to run on several instances at once. */
export function startWorkers(ctx: AppContext, log: Logger): { stop(): Promise<void> } {
  const timers: NodeJS.Timeout[] = [];
  const running = new Set<Promise<unknown>>();
  const every = (name: string, intervalMs: number, work: () => Promise<unknown>) => {
    timers.push(setInterval(() => {
      const run = work().catch((err) => log.error({ err, worker: name }, 'worker run failed'));
      running.add(run);
      void run.finally(() => running.delete(run));
    }, intervalMs).unref());
  };
  every('replay-sweep', NONCE_SWEEP_INTERVAL_MS, () =>
    sweepReplayStore(ctx.db, ctx.clock.now() - ctx.config.timestampWindowMs - NONCE_SWEEP_MARGIN_MS));
  // D38: signed webhooks from the outbox; leased rows, so several instances never share an attempt.
  every('webhook-delivery', WEBHOOK_POLL_INTERVAL_MS, webhookDeliveryWorker(ctx, log));
  // D23, D24: card applications; leased rows (FOR UPDATE SKIP LOCKED), a crashed worker's lease expires.
  every('card-applications', CARD_APPLY_POLL_INTERVAL_MS, () => processCardApplications(ctx, { log }));
  // 2.12, section 6: LOW_BALANCE at most once per UTC day per pool while low; leased rows (SKIP LOCKED).
  every('low-balance-scan', LOW_BALANCE_SCAN_INTERVAL_MS, () => scanLowBalances(ctx));
  return {
    async stop() {
      for (const t of timers) clearInterval(t);
      await Promise.allSettled([...running]);
    },
  };
}
