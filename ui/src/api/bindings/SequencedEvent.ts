import type { Event } from "./Event";

/** An engine event as the shell forwards it, numbered in its session's stream. */
export type SequencedEvent = Event & { seq: number };
