import { describe, expect, it } from 'vitest';
import { dataSetEvents, eventInWords, eventLine, type DataSetEvent } from '../../../src/explorer/client/events.js';

const event = (type: string, version?: { number: string; type: string }): DataSetEvent => ({
  id: type,
  type,
  occurredAt: '2026-11-25T10:00:00Z',
  data: { version },
});

describe('the data set page’s change log', () => {
  it('says each event in words', () => {
    expect(eventInWords(event('data_set_version.published', { number: '1.1', type: 'Minor' }))).toBe(
      'Version 1.1 published (minor version)',
    );
    expect(eventInWords(event('data_set_version.withdrawn', { number: '1.0', type: 'Major' }))).toBe(
      'Version 1.0 withdrawn',
    );
    expect(eventInWords(event('data_set.created'))).toBe('Data set published');
  });

  it('gives a version’s publication date beside the day the feed recorded it, and says which is which', () => {
    const day = (iso: string) => iso.slice(0, 10);
    const publishedOn = (number: string) => (number === '1.0' ? '2022-12-15T09:30:00Z' : undefined);
    expect(eventLine(event('data_set_version.published', { number: '1.0', type: 'Major' }), publishedOn, day)).toBe(
      'Version 1.0 published (major version) on 2022-12-15 (recorded in the event feed on 2026-11-25)',
    );
    expect(eventLine(event('data_set.created'), publishedOn, day)).toBe(
      'Data set published (recorded in the event feed on 2026-11-25)',
    );
  });

  it('follows the feed’s pages (next cursor) and lists newest first', async () => {
    const pages: Record<string, unknown> = {
      '': { events: [event('data_set.created')], nextCursor: 'c1', hasMore: true },
      c1: { events: [], nextCursor: 'c2', hasMore: true },
      c2: {
        events: [event('data_set_version.published', { number: '1.0', type: 'Major' })],
        nextCursor: 'c3',
        hasMore: false,
      },
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
