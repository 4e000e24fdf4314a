import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { traineeCommands } from '../../src/cli/register-trainee.js';
import { registerFixture, today, type RegisterFixture } from '../register/helpers.js';

const run = promisify(execFile);

let f: RegisterFixture;
beforeAll(async () => {
  f = await registerFixture();
});
afterAll(async () => {
  await f?.close();
});

/** Runs one operator command in-process, returning what it printed (or the error it threw). */
async function command(name: string, ...args: string[]): Promise<string> {
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  try {
    await traineeCommands[name]!(args, f.database.db);
    return log.mock.calls.map((c) => c.join(' ')).join('\n');
  } finally {
    log.mockRestore();
  }
}

describe('operator trainee commands', () => {
  it('take a trainee from creation to awarded, together with the API', async () => {
    const created = await f.call('POST', 'v2026.1', '/trainees', {
      data: {
        first_names: 'Mary',
        last_name: 'Somerville',
        date_of_birth: '1991-02-03',
        sex: '10',
        email: 'mary@example.com',
        training_route: '11',
        itt_start_date: '2026-09-01',
        itt_end_date: '2027-09-01',
        course_subject_1: '100425',
        study_mode: '01',
        course_age_range: '13918',
        itt_aim: '202',
        itt_qualification_aim: '001',
        course_year: '1',
        fund_code: '2',
        funding_method: '6',
        hesa_id: '0310261553102',
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.trainee_id as string;
    expect(created.json().data.state).toBe('submitted_for_trn');

    expect(await command('trainee:receive-trn', id, '1234567')).toBe(
      `Trainee ${id}: TRN 1234567 recorded, state trn_received.`,
    );
    expect((await f.call('GET', 'v2026.1', `/trainees/${id}`)).json()).toMatchObject({
      state: 'trn_received',
      trn: '1234567',
    });

    for (const name of ['School A', 'School B']) {
      await f.call('POST', 'v2026.1', `/trainees/${id}/placements`, { data: { name } });
    }
    const recommended = await f.call('POST', 'v2026.1', `/trainees/${id}/update-qts-or-eyts-status`, {
      data: { qts_standards_met_date: today() },
    });
    expect(recommended.statusCode, recommended.body).toBe(202);

    expect(await command('trainee:award', id, today())).toBe(`Trainee ${id}: awarded on ${today()}, state awarded.`);
    const awarded = (await f.call('GET', 'v2026.1', `/trainees/${id}`)).json();
    expect(awarded.state).toBe('awarded');
    expect(awarded.awarded_at).toBe(`${today()}T00:00:00.000Z`);

    const audits = await f.database.db
      .selectFrom('trainee_audits')
      .selectAll()
      .where('trainee_id', '=', id)
      .orderBy('id')
      .execute();
    const byAction = Object.fromEntries(audits.map((a) => [a.action, a]));
    expect(byAction.receive_trn!.token_id).toBeNull();
    expect(byAction.receive_trn!.before).toEqual({ trn: null, state: 'submitted_for_trn' });
    expect(byAction.award!.after).toMatchObject({ state: 'awarded' });
  });

  it('give a deferred or withdrawn trainee its TRN without changing its state', async () => {
    for (const state of ['deferred', 'withdrawn'] as const) {
      const id = await f.insertTrainee({ state, trn: null });
      await command('trainee:receive-trn', id, '7654321');
      const row = await f.database.db
        .selectFrom('trainees')
        .select(['state', 'trn'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ state, trn: '7654321' });
    }
  });

  it.each([
    ['trainee:receive-trn', ['unknown-id', '1234567'], 'No trainee with id "unknown-id"'],
    ['trainee:receive-trn', ['{id}', '123'], 'The TRN must be 7 digits (got "123")'],
    ['trainee:receive-trn', ['{id}'], 'Usage: trainee:receive-trn <trainee id> <trn>'],
    ['trainee:award', ['{id}', today()], 'only a trainee recommended_for_award can be awarded'],
    ['trainee:award', ['{id}', '2026-02-30'], 'The award date must be a date YYYY-MM-DD (got "2026-02-30")'],
    ['trainee:award', ['{id}', '2999-01-01'], 'The award date must not be in the future'],
  ])('%s %j is refused and changes nothing', async (name, args, message) => {
    const id = await f.insertTrainee({ state: 'trn_received' });
    const before = await f.database.db
      .selectFrom('trainees')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    await expect(command(name, ...args.map((a) => a.replace('{id}', id)))).rejects.toThrow(message);
    expect(
      await f.database.db.selectFrom('trainees').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
    ).toEqual(before);
  });

  it('refuses a TRN for an awarded trainee and an award before the standards were met', async () => {
    const awarded = await f.insertTrainee({ state: 'awarded' });
    await expect(command('trainee:receive-trn', awarded, '1234567')).rejects.toThrow(`Trainee ${awarded} is awarded`);
    const recommended = await f.insertTrainee({ state: 'recommended_for_award', outcome_date: '2026-06-01' });
    await expect(command('trainee:award', recommended, '2026-05-31')).rejects.toThrow(
      'must not be before the date the standards were met (2026-06-01)',
    );
  });

  it('are dispatched by `npm run register` (the register CLI), exiting 1 with the reason on a refusal', async () => {
    const id = await f.insertTrainee({ state: 'submitted_for_trn', trn: null });
    const env = { ...process.env, DATABASE_URL: f.database.url, LOG_LEVEL: 'silent' };
    const ok = await run('npx', ['tsx', 'src/cli/register.ts', 'trainee:receive-trn', id, '2345678'], { env });
    expect(ok.stdout.trim()).toBe(`Trainee ${id}: TRN 2345678 recorded, state trn_received.`);
    const refused = await run('npx', ['tsx', 'src/cli/register.ts', 'trainee:award', id, today()], { env }).catch(
      (e) => e,
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `Error: Trainee ${id} is trn_received: only a trainee recommended_for_award can be awarded`,
    );
  }, 60000);
});
