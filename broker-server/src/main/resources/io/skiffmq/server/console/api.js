// The HTTP API as the console calls it: HTTP basic authentication with the credentials entered in the login
// form, kept in sessionStorage (gone when the tab closes), as RabbitMQ's management UI does.

const CREDENTIALS = 'skiffmq.credentials';

/** An answer of the API other than 2xx: its status and RabbitMQ's {error, reason}. */
export class ApiError extends Error {
  constructor(status, error, reason) {
    super(reason || error || `HTTP ${status}`);
    this.status = status;
    this.error = error;
    this.reason = reason;
  }

  /** The credentials were refused (RabbitMQ's 401 "not_authorized"), as opposed to an action not allowed. */
  get loginRefused() {
    return this.status === 401 && this.error !== 'not_authorised';
  }
}

function base64(text) {
  let binary = '';
  for (const b of new TextEncoder().encode(text)) {
    binary += String.fromCharCode(b);
  }
  return btoa(binary);
}

export function remember(user, password) {
  sessionStorage.setItem(CREDENTIALS, base64(`${user}:${password}`));
}

export function forget() {
  sessionStorage.removeItem(CREDENTIALS);
}

export function loggedIn() {
  return sessionStorage.getItem(CREDENTIALS) !== null;
}

/** A path segment: a virtual host or a name, percent-encoded ("/" is "%2F"). */
export function seg(name) {
  return encodeURIComponent(name);
}

/**
 * Calls the API; resolves to the parsed JSON (null when there is none), rejects with an ApiError.
 * X-Requested-With tells the API not to challenge, so the browser does not open its own login dialog.
 */
export async function call(method, path, body, headers = {}) {
  const request = {
    method,
    headers: {
      'Authorization': `Basic ${sessionStorage.getItem(CREDENTIALS) || ''}`,
      'X-Requested-With': 'XMLHttpRequest',
      ...headers,
    },
    cache: 'no-store',
  };
  if (body !== undefined) {
    request.headers['Content-Type'] = 'application/json';
    request.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, request);
  } catch (e) {
    throw new ApiError(0, 'unreachable', `the broker did not answer (${e.message})`);
  }
  const text = await response.text();
  let json = null;
  if (text) {
    try {
      json = JSON.parse(text);
    } catch (e) {
      json = null;
    }
  }
  if (!response.ok) {
    throw new ApiError(response.status, json && json.error, json && json.reason);
  }
  return json;
}
