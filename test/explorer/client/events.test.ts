import { describe, expect, it } from 'vitest';
import { dataSetEvents, eventInWords, type DataSetEvent } from '../../../src/explorer/client/events.js';

const event = (type: string, version?: { number: string; type: string }): DataSetEvent => ({ id: type, type, occurredAt: '2026-11-25T10:00:00Z', data: { version } });

describe('the data set page’s change log', () => {
  it('says each event in words', () => {
    expect(eventInWords(event('data_set_version.published', { number: '1.1', type: 'Minor' }))).toBe('Version 1.1 published (minor version)');
    expect(eventInWords(event('data_set_version.withdrawn', { number: '1.0', type: 'Major' }))).toBe('Version 1.0 withdrawn');
    expect(eventInWords(event('data_set.created'))).toBe('Data set published');
  });

  it('follows the feed’s pages (next cursor) and lists newest first', async () => {
    const pages: Record<string, unknown> = {
      '': { events: [event('data_set.created')], nextCursor: 'c1', hasMore: true },
      c1: { events: [], nextCursor: 'c2', hasMore: true },
      c2: { events: [event('data_set_version.published', { number: '1.0', type: 'Major' })], nextCursor: 'c3', hasMore: false },
    };
    const asked: string[] = [];
    const get = async <T>(path: string): Promise<T> => {
      asked.push(path);
      return pages[new URL(path, 'http://x').searchParams.get('after') ?? ''] as T;
    };
    const events = await dataSetEvents(get, 'ds-1');
    expect(events.map((e) => e.type)).toEqual(['data_set_version.published', 'data_set.created']);
    expect(asked[0]).toBe('/v1/events?resource=ds-1&limit=500');
    expect(asked).toHaveLength(3);
  });
});
