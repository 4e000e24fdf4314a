import { ConflictError, NotFoundError, ValidationError, type FieldError } from '../../errors.js';

/** Where an import problem is: the file (its base name), the physical line (1 = header) and the column name. */
export interface ImportProblem {
  file: string;
  line?: number;
  column?: string;
  message: string;
}

export function problemToFieldError(problem: ImportProblem): FieldError {
  const where = [
    problem.file,
    problem.line === undefined ? undefined : `line ${problem.line}`,
    problem.column && `column ${problem.column}`,
  ]
    .filter(Boolean)
    .join(', ');
  return {
    path: where,
    message: problem.message,
    code: 'ImportFileInvalid',
    detail: { file: problem.file, line: problem.line, column: problem.column },
  };
}

/** The data or meta file breaks the standard; the import wrote nothing. */
export class ImportValidationError extends ValidationError {
  constructor(readonly problems: ImportProblem[]) {
    super(problems.map(problemToFieldError), 'The data set files are not valid; nothing was imported.', 400);
  }
}

/** The version number already exists for the data set. */
export class DuplicateVersionError extends ConflictError {
  constructor(dataSetId: string, version: string) {
    super(`Data set ${dataSetId} already has a version ${version}; nothing was imported.`);
  }
}

export class DataSetNotFoundError extends NotFoundError {
  constructor(dataSetId: string) {
    super(`Data set ${dataSetId} does not exist. Seed the catalogue or create it first (stats-admin add-data-set).`);
  }
}

/** Collects problems up to a limit, so one run reports several mistakes without flooding the terminal. */
export class ProblemCollector {
  readonly problems: ImportProblem[] = [];
  constructor(readonly limit = 20) {}

  add(problem: ImportProblem): void {
    if (this.problems.length < this.limit) this.problems.push(problem);
  }

  get full(): boolean {
    return this.problems.length >= this.limit;
  }

  throwIfAny(): void {
    if (this.problems.length > 0) throw new ImportValidationError(this.problems);
  }
}
