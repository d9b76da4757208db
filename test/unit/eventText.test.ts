/** An event's text as the log keeps it, and the body its deliveries send (src/events/outbox.ts). */
import { describe, expect, it } from 'vitest';
import { deliveryBody, eventText } from '../../src/events/outbox.js';

const at = new Date('2026-11-26T10:00:00.000Z');
const data = { orgId: 'org-1', teamId: 'team-1', object: { id: 'task-1', title: 'Quote "Baltic" \\ café 𝄞 \u2028' } };

describe('the event text and its delivery body', () => {
  it('keeps the event with its id first, then type, timestamp and data', () => {
    const text = eventText('event-1', 'task.updated', at, data);
    expect(Object.keys(JSON.parse(text))).toEqual(['id', 'type', 'timestamp', 'data']);
    expect(JSON.parse(text)).toEqual({ id: 'event-1', type: 'task.updated', timestamp: at.toISOString(), data });
  });

  it('sends the event without its id, byte for byte the rest of its text', () => {
    const text = eventText('event-1', 'task.updated', at, data);
    expect(deliveryBody('event-1', text)).toBe(JSON.stringify({ type: 'task.updated', timestamp: at.toISOString(), data }));
  });

  it('refuses a text that does not start with the id it is sent as', () => {
    expect(() => deliveryBody('event-2', eventText('event-1', 'task.updated', at, data))).toThrow(/event-2/);
    expect(() => deliveryBody('event-1', JSON.stringify({ type: 'task.updated', id: 'event-1' }))).toThrow(/event-1/);
  });
});
