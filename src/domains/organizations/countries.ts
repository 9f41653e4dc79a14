/**
 * ISO 3166-1 alpha-2 country codes (officially assigned, 249 entries). Used to check
 * `countryCode`, `addressCountryCode` and `phoneCountryCode`.
 */
const ISO_3166_ALPHA2 = `
AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW
BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI
FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN
IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME
MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF
PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV
SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE
YT ZA ZM ZW`.trim().split(/\s+/);

export const ISO_COUNTRIES: ReadonlySet<string> = new Set(ISO_3166_ALPHA2);

export function isIsoCountry(code: string): boolean {
  return ISO_COUNTRIES.has(code);
}

/**
 * Countries whose mobile numbers the service supports (update-phone, 4.5): every ISO country
 * except territories without their own mobile numbering or with no populated subscriber base
 * (AQ, BV, HM, TF, UM, GS, PN, IO) and the countries under comprehensive sanctions where card
 * delivery and 3DS messaging cannot lawfully reach subscribers (KP, IR, SY, CU). Static: the phone
 * list is a delivery capability, not a policy list like sanctioned_countries (which operators edit).
 */
const PHONE_UNSUPPORTED = new Set(['AQ', 'BV', 'HM', 'TF', 'UM', 'GS', 'PN', 'IO', 'KP', 'IR', 'SY', 'CU']);

export const SUPPORTED_PHONE_COUNTRIES: readonly string[] = ISO_3166_ALPHA2.filter((c) => !PHONE_UNSUPPORTED.has(c));
const SUPPORTED_PHONE_SET = new Set(SUPPORTED_PHONE_COUNTRIES);

export function isSupportedPhoneCountry(code: string): boolean {
  return SUPPORTED_PHONE_SET.has(code);
}
