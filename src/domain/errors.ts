/**
 * The one error taxonomy of the service (docs/rest.md "Responses"). Every use case throws one
 * of these; GraphQL puts `code` (and `fields`) in `extensions`, REST maps `status` and prints
 * `{"error": {"code", "message", "fields"}}`. Anything else is an internal error (500, masked).
 */
export type ErrorCode =
  | "validation_error"
  | "authentication_required"
  | "permission_denied"
  | "not_found"
  | "invalid_state"
  | "tax_agency_rejected"
  | "rate_limited"
  | "service_unavailable";

/** Field path (dot-separated, array indexes as numbers: `lines.0.quantity`) -> messages. */
export type FieldErrors = Record<string, string[]>;

/**
 * Adds `reason` under `path` in `fields`. Safe for any path, also one named like an
 * Object.prototype key (`constructor`, `toString`, `__proto__`): only own keys count, and the key
 * is defined, never assigned (assigning `__proto__` would replace the prototype instead).
 */
export function addFieldError(fields: FieldErrors, path: string, reason: string): void {
  if (!Object.hasOwn(fields, path))
    Object.defineProperty(fields, path, { value: [], enumerable: true, writable: true, configurable: true });
  fields[path].push(reason);
}

export abstract class DomainError extends Error {
  abstract readonly code: ErrorCode;
  abstract readonly status: number;
  readonly fields?: FieldErrors;
  constructor(message: string, fields?: FieldErrors) {
    super(message);
    this.name = new.target.name;
    this.fields = fields;
  }
}

/** 400: the input breaks a rule; `fields` names each offending field. Nothing was written. */
export class ValidationError extends DomainError {
  readonly code = "validation_error" as const;
  readonly status = 400;
  constructor(message: string, fields: FieldErrors = {}) {
    super(message, fields);
  }
  /** One field, one reason: `ValidationError.field("lines.0.quantity", "must not be negative")`. */
  static field(path: string, reason: string): ValidationError {
    return new ValidationError(`${path}: ${reason}`, { [path]: [reason] });
  }
  /** Throws `${message}: path: reasons; ...` naming every field of `fields`, when there is one. */
  static throwIfAny(message: string, fields: FieldErrors): void {
    if (Object.keys(fields).length === 0) return;
    const summary = Object.entries(fields)
      .map(([path, reasons]) => `${path}: ${reasons.join(", ")}`)
      .join("; ");
    throw new ValidationError(`${message}: ${summary}`, fields);
  }
}

/** 401: missing, malformed or revoked API key. */
export class AuthenticationError extends DomainError {
  readonly code = "authentication_required" as const;
  readonly status = 401;
}

/** 403: the key is valid but may not do this. */
export class PermissionError extends DomainError {
  readonly code = "permission_denied" as const;
  readonly status = 403;
}

/** 404: no such resource for this organization and mode (other tenants' rows read the same). */
export class NotFoundError extends DomainError {
  readonly code = "not_found" as const;
  readonly status = 404;
  constructor(resource: string, id: string) {
    super(`No ${resource} with id ${id.length > 200 ? `${id.slice(0, 200)}… (${id.length} characters)` : id}`);
  }
}

/** 409: the resource's state forbids the action (for example updating a finalized invoice). */
export class InvalidStateError extends DomainError {
  readonly code = "invalid_state" as const;
  readonly status = 409;
}

/** 422: the tax agency rejected the document. */
export class TaxAgencyRejectedError extends DomainError {
  readonly code = "tax_agency_rejected" as const;
  readonly status = 422;
}

/** 429: too many requests; `retryAfterSeconds`, when known, is the `Retry-After` value. */
export class RateLimitedError extends DomainError {
  readonly code = "rate_limited" as const;
  readonly status = 429;
  constructor(
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/**
 * 503: the database cannot serve the request now (unreachable, no free connection, a statement
 * timeout). Nothing was written; retry after `retryAfterSeconds` (the `Retry-After` header).
 */
export class ServiceUnavailableError extends DomainError {
  readonly code = "service_unavailable" as const;
  readonly status = 503;
  constructor(
    message = "The service cannot reach its database right now; nothing was changed. Retry later.",
    readonly retryAfterSeconds = 5,
  ) {
    super(message);
  }
}

/** Collects field errors and throws them together as one ValidationError. */
export class FieldErrorCollector {
  private readonly fields: FieldErrors = {};
  add(path: string, reason: string): void {
    addFieldError(this.fields, path, reason);
  }
  /**
   * Runs `check`; a ValidationError it throws is added here (field by field) instead of
   * propagating, so one 400 can name every bad field. Other errors propagate.
   */
  collect(check: () => void): void {
    try {
      check();
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      for (const [path, reasons] of Object.entries(e.fields ?? {}))
        for (const reason of reasons) this.add(path, reason);
    }
  }
  /** The fields collected so far (path -> reasons). */
  collected(): FieldErrors {
    return { ...this.fields };
  }
  get empty(): boolean {
    return Object.keys(this.fields).length === 0;
  }
  throwIfAny(message = "Invalid input"): void {
    ValidationError.throwIfAny(message, this.fields);
  }
}
