import { route, type RouteDef } from '../../platform/http/router.ts';
import {
  NetworkQrPaymentBody, QrDetailQuery, QrPayment, QrPaymentPage, QrTransactionsQuery, SimulateQrPaymentBody,
} from '../../../sdk/contract/qr-payments.ts';
import type { ErrorCode } from '../../platform/errors.ts';
import { bookQrPayment, listQrPayments, qrPaymentDetail, type QrDeps } from './qr-payments.ts';

const paging = (q: { page?: number; pageSize?: number }) => ({ page: q.page ?? 1, pageSize: q.pageSize ?? 20 });
const BOOK_ERRORS: ErrorCode[] = ['ASSET_INVALID', 'TRANSACTION_NOT_FOUND', 'TRANSACTION_STATUS_INVALID', 'TRANSACTION_AMOUNT_INVALID'];
const BOOKING = 'PAY needs externalUserId, asset and merchantName and is booked at once from the user\'s free balance of the asset; '
  + 'a decline is a success envelope with status DECLINED and declineReason CAPABILITY_FROZEN (PAYMENT_FROZEN or ACCOUNT_FROZEN, declineDetail USER:<code>) '
  + 'or INSUFFICIENT_BALANCE, and changes no balance. REFUND (the whole payment) and REVERSAL (the whole payment, nothing returned before) '
  + 'and REFUND_PART (at most what is not yet returned) credit free back; they name the PAY and nothing else of it.';

/** QR payments of the managed-balance model (issue 11; 2.9). See docs/qr-payments.md. */
export function qrPaymentRoutes(deps: QrDeps): RouteDef[] {
  return [
    route({
      method: 'POST', url: '/internal/network/v1/qr-payment', auth: 'network', tag: 'Network ingress',
      summary: 'A QR payment message from the network: PAY, REFUND, REFUND_PART or REVERSAL',
      description: `Signed with an operator-issued network key. Idempotent on networkTransactionId: a retry is answered exactly as the first time and booked once. `
        + `${BOOKING} PAY names the partner (partnerId, else PARTNER_INVALID); returns name the PAY with originalNetworkTransactionId.`,
      body: NetworkQrPaymentBody, data: QrPayment, errors: ['PARTNER_INVALID', ...BOOK_ERRORS],
      handler: ({ body }) => {
        const { networkTransactionId, originalNetworkTransactionId, partnerId, ...rest } = body;
        return bookQrPayment(deps, {
          ...rest, source: 'NETWORK', networkTransactionId, partnerId: partnerId ?? null,
          original: originalNetworkTransactionId !== undefined ? { networkTransactionId: originalNetworkTransactionId } : undefined,
        });
      },
    }),
    route({
      method: 'POST', url: '/open-api/sandbox/v1/simulate/qr-payment', auth: 'partner', tag: 'Sandbox', sandboxOnly: true,
      summary: 'Simulate a QR payment message for one of your users',
      description: `Runs exactly what the network ingress runs. ${BOOKING} Returns name your PAY with orderId.`,
      body: SimulateQrPaymentBody, data: QrPayment, errors: BOOK_ERRORS,
      // A PAY names no orderId (the answer does); a return names the PAY's.
      example: { transType: 'PAY', externalUserId: 'user-42', asset: 'USDT', amount: 100.5, merchantName: 'Blue Bottle Coffee', merchantCountry: 'HK', mcc: '5814' },
      handler: ({ body, partner }) => {
        const { orderId, ...rest } = body;
        return bookQrPayment(deps, {
          ...rest, source: 'SANDBOX', partnerId: partner.partnerId, original: orderId !== undefined ? { orderId } : undefined,
        });
      },
    }),
    route({
      method: 'GET', url: '/card/v1/qr/transactions', auth: 'partner', tag: 'QR payments',
      summary: 'QR payment records of your users, newest first',
      description: 'Filters: externalUserId, transType, status, asset, startTime (inclusive) and endTime (exclusive) on createTime; paged (page, pageSize). An unknown user is an empty page.',
      querystring: QrTransactionsQuery, data: QrPaymentPage, errors: [],
      handler: ({ query, partner }) => {
        const { page, pageSize, ...filter } = query;
        return listQrPayments(deps, partner.partnerId, filter, paging({ page, pageSize }));
      },
    }),
    route({
      method: 'GET', url: '/card/v1/qr/transaction-detail', auth: 'partner', tag: 'QR payments',
      summary: 'One QR payment record by orderId',
      querystring: QrDetailQuery, data: QrPayment, errors: ['TRANSACTION_NOT_FOUND'],
      handler: ({ query, partner }) => qrPaymentDetail(deps, partner.partnerId, query.orderId),
    }),
  ];
}
