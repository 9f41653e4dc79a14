/**
 * ISO 4217 currencies a card network may present, with their minor units (the most decimal
 * places an amount in that currency may carry). Corporate cards settle only in USD and HKD (2.8);
 * a transaction in another currency arrives with the network's billing amount in a settlement
 * currency. Funds and precious-metal codes (X..) are left out: no card transaction uses them.
 */
const MINOR_UNITS_TABLE = `
AED2 AFN2 ALL2 AMD2 ANG2 AOA2 ARS2 AUD2 AWG2 AZN2 BAM2 BBD2 BDT2 BGN2 BHD3 BIF0 BMD2 BND2 BOB2 BRL2 BSD2 BTN2 BWP2 BYN2
BZD2 CAD2 CDF2 CHF2 CLP0 CNY2 COP2 CRC2 CUP2 CVE2 CZK2 DJF0 DKK2 DOP2 DZD2 EGP2 ERN2 ETB2 EUR2 FJD2 FKP2 GBP2 GEL2 GHS2
GIP2 GMD2 GNF0 GTQ2 GYD2 HKD2 HNL2 HTG2 HUF2 IDR2 ILS2 INR2 IQD3 IRR2 ISK0 JMD2 JOD3 JPY0 KES2 KGS2 KHR2 KMF0 KPW2 KRW0
KWD3 KYD2 KZT2 LAK2 LBP2 LKR2 LRD2 LSL2 LYD3 MAD2 MDL2 MGA2 MKD2 MMK2 MNT2 MOP2 MRU2 MUR2 MVR2 MWK2 MXN2 MYR2 MZN2 NAD2
NGN2 NIO2 NOK2 NPR2 NZD2 OMR3 PAB2 PEN2 PGK2 PHP2 PKR2 PLN2 PYG0 QAR2 RON2 RSD2 RUB2 RWF0 SAR2 SBD2 SCR2 SDG2 SEK2 SGD2
SHP2 SLE2 SOS2 SRD2 SSP2 STN2 SVC2 SYP2 SZL2 THB2 TJS2 TMT2 TND3 TOP2 TRY2 TTD2 TWD2 TZS2 UAH2 UGX0 USD2 UYU2 UZS2 VES2
VND0 VUV0 WST2 XAF0 XCD2 XOF0 XPF0 YER2 ZAR2 ZMW2 ZWL2`;

export const CURRENCY_MINOR_UNITS: ReadonlyMap<string, number> = new Map(
  MINOR_UNITS_TABLE.trim().split(/\s+/).map((entry) => [entry.slice(0, 3), Number(entry.slice(3))]),
);

/** Minor units of an ISO 4217 code, or undefined when the code is not a card currency. */
export function minorUnits(currency: string): number | undefined {
  return CURRENCY_MINOR_UNITS.get(currency);
}
