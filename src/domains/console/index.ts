/**
 * The operator console (issue 29): web pages under /console for the people who run the issuer,
 * behind named operator accounts (the operators domain). Reads every domain through its public
 * entry; its changes go through the same domain functions as the API's.
 */
export { registerConsole } from './plugin.ts';
