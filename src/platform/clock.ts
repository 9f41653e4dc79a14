/** The service clock; tests inject a movable one. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
