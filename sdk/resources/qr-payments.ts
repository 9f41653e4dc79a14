import type { Static } from 'typebox';
import { paginate, type CallOptions, type SignedHttpClient } from '../client.ts';
import type { QrPayment as QrPaymentSchema, QrPaymentPage, QrTransactionsQuery } from '../contract/qr-payments.ts';

// Request and answer types come from the schemas that validate the routes (sdk/contract/qr-payments.ts).

export type QrPayment = Static<typeof QrPaymentSchema>;
export type QrTransactionsParams = Static<typeof QrTransactionsQuery>;

/** QR payment records of your managed users (transType PAY, REFUND, REFUND_PART, REVERSAL) (2.9). */
export class QrPaymentsResource {
  constructor(private readonly http: SignedHttpClient) {}

  /** @example const page = await client.qrPayments.list({ externalUserId: 'u-1', transType: 'PAY' }); */
  list(params: QrTransactionsParams = {}, options?: CallOptions): Promise<Static<typeof QrPaymentPage>> {
    return this.http.call('GET', '/card/v1/qr/transactions', { query: { ...params } }, options);
  }
  listAll(params: Omit<QrTransactionsParams, 'page'> = {}, options?: CallOptions) {
    return paginate((page) => this.list({ ...params, page, pageSize: params.pageSize ?? 100 }, options));
  }

  /** @example const record = await client.qrPayments.detail(orderId); */
  detail(orderId: string, options?: CallOptions): Promise<QrPayment> {
    return this.http.call('GET', '/card/v1/qr/transaction-detail', { query: { orderId } }, options);
  }
}
