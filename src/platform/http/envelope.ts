import { ERROR_CATALOG, type ErrorCode, type ErrorData } from '../errors.ts';

/** D1 success envelope. */
export function successEnvelope(data: unknown) {
  return { code: 'SYS_SUCCESS', message: null, messageDetail: null, data: data ?? null };
}

/** D1 failure envelope: messageDetail carries the seven display fields of 2.1. */
export function errorEnvelope(code: ErrorCode, message: string, data: ErrorData | null) {
  return {
    code,
    message,
    messageDetail: {
      message,
      title: ERROR_CATALOG[code].message,
      type: 'ERROR',
      icon: null,
      action: null,
      linkTitle: null,
      linkUrl: null,
    },
    data,
  };
}

/** D3 framework-level rejection: the only responses carrying `success`. */
export function frameworkRejection(message: string) {
  return { success: false, code: 'SYS_ILLEGAL_PARAM', message, messageDetail: null, data: null };
}
