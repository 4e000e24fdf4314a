/**
 * TypeBox schemas of the placement, degree and transition endpoints. Params and responses are declared on the
 * routes (validated and serialized). The request bodies (`…Body`) are only described, in the per-version OpenAPI
 * documents: the services check bodies themselves, with the real service's messages and status codes.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { externalName, type RegisterVersion } from './versions/index.js';

const nullableString = (description?: string) =>
  Type.Union([Type.String(), Type.Null()], description ? { description } : {});
const dateTime = Type.String({ format: 'date-time' });

export const PlacementSchema = Type.Object(
  {
    placement_id: Type.String({ description: 'The placement id (24-character slug)' }),
    urn: nullableString('School URN: 6 digits'),
    name: nullableString('School name (the school’s own when the URN is a known school)'),
    postcode: nullableString(),
    address: nullableString('Computed: "URN <urn>, <town>, <postcode>" for known schools; null for special URNs'),
    created_at: dateTime,
    updated_at: dateTime,
  },
  { description: 'A placement of a trainee' },
);

export const DegreeSchema = Type.Object(
  {
    degree_id: Type.String({ description: 'The degree id (24-character slug)' }),
    uk_degree: nullableString('HESA degree type code (UK degrees)'),
    non_uk_degree: nullableString('HESA degree type code (non-UK degrees)'),
    subject: nullableString('HESA degree subject (HECoS) code'),
    institution: nullableString('HESA institution code; null for "Other UK institution"'),
    grade: nullableString('HESA degree grade code'),
    country: nullableString('HESA country code (non-UK degrees; null for UK degrees)'),
    graduation_year: Type.Integer(),
    other_grade: nullableString(),
    institution_uuid: nullableString(),
    uk_degree_uuid: nullableString(),
    subject_uuid: nullableString(),
    grade_uuid: nullableString(),
    created_at: dateTime,
    updated_at: dateTime,
  },
  { description: 'A degree of a trainee' },
);

/** The trainee body (its fields differ by version; see openapi/index.ts), documented as an open object here. */
export const TraineeSchema = Type.Object(
  {},
  { additionalProperties: true, description: 'The trainee, as GET /trainees/{trainee_id} returns it' },
);

/** Every register error body of these endpoints: `{"errors":[…]}`, with `data` for a 409. */
export const RegisterErrorsSchema = Type.Object(
  {
    errors: Type.Array(Type.Union([Type.Object({ error: Type.String(), message: Type.String() }), Type.String()])),
    data: Type.Optional(Type.Array(Type.Unknown())),
  },
  { additionalProperties: true, description: 'Register error body' },
);

export const TraineeParams = Type.Object({ trainee_id: Type.String({ description: 'The trainee id' }) });
export const PlacementParams = Type.Object({ trainee_id: Type.String(), placement_id: Type.String() });
export const DegreeParams = Type.Object({ trainee_id: Type.String(), degree_id: Type.String() });

const wrap = (data: TSchema) => Type.Object({ data });

export const DeferBody = wrap(
  Type.Object({
    defer_date: Type.String({ format: 'date', description: 'Required, ISO 8601 date' }),
    defer_reason: Type.Optional(Type.String({ maxLength: 500 })),
  }),
);

export function withdrawBody(version: RegisterVersion) {
  const dateField = externalName(version, 'withdrawal_date');
  return wrap(
    Type.Object({
      [dateField]: Type.String({ format: 'date', description: 'Required; not before the ITT start date' }),
      trigger: Type.Union([Type.Literal('provider'), Type.Literal('trainee')]),
      future_interest: Type.Union([Type.Literal('yes'), Type.Literal('no'), Type.Literal('unknown')]),
      reasons: Type.Array(Type.String(), {
        description: 'Withdrawal reason codes valid for the trigger (GET /reference-data)',
      }),
      another_reason: Type.Optional(Type.String({ description: 'Required when a reason ends in another_reason' })),
      safeguarding_concern_reasons: Type.Optional(Type.String({ description: 'Required with safeguarding_concerns' })),
    }),
  );
}

export const QtsBody = wrap(
  Type.Object({
    qts_standards_met_date: Type.String({ format: 'date', description: 'Not in the future, not before ITT start' }),
  }),
);

export const PlacementBody = wrap(
  Type.Object({
    urn: Type.Optional(nullableString('6 digits; a known school supplies name and postcode')),
    name: Type.Optional(nullableString('Required unless the URN is a known school')),
    postcode: Type.Optional(nullableString('A UK postcode')),
  }),
);

export const DegreeBody = wrap(
  Type.Object({
    subject: Type.Optional(Type.String()),
    graduation_year: Type.Optional(
      Type.Union([Type.Integer(), Type.String()], { description: 'YYYY, YYYY-MM-DD or an integer' }),
    ),
    country: Type.Optional(nullableString('Blank or XF/XG/XH/XI/XK (or an institution) makes a UK degree')),
    uk_degree: Type.Optional(nullableString()),
    non_uk_degree: Type.Optional(nullableString()),
    institution: Type.Optional(nullableString()),
    grade: Type.Optional(nullableString()),
  }),
);
