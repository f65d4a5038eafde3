// The console's shell: login, hash routes (#/, #/queues, #/queues/{vhost}/{name}, #/exchanges, #/connections),
// polling the page shown, confirmations and messages. Pages are in pages.js and queue.js.

import { ApiError, call, forget, loggedIn, remember } from './api.js';
import { el } from './dom.js';
import { connections, exchanges, overview, queues } from './pages.js';
import { queue } from './queue.js';

const REFRESH = 'skiffmq.refresh';
const $ = (id) => document.getElementById(id);

/** Bumped on every navigation and logout: a refresh of an older page drops its result. */
let generation = 0;
let timer = null;
/** The shown page's poll, and whether it stopped because the tab was hidden (it runs again when shown). */
let poll = null;
let paused = false;
/** A notice to show on the next page (an action that navigates, such as deleting a queue). */
let carried = null;

function refreshMillis() {
  return Number($('refresh').value) || 5000;
}

function showLogin(reason) {
  generation++;
  clearTimeout(timer);
  $('top').hidden = true;
  $('page').hidden = true;
  $('message').hidden = true;
  $('login').hidden = false;
  $('login-error').hidden = !reason;
  $('login-error').textContent = reason ? `Login failed: ${reason}` : '';
  $('login-password').value = '';
  $('login-user').focus();
}

function describe(e) {
  if (e instanceof ApiError) {
    return `${e.status ? `${e.status} ` : ''}${e.error ? `${e.error}: ` : ''}${e.reason || ''}`;
  }
  return e.message || String(e);
}

/** An error shown to the user; a refused login returns to the login form with the API's reason. */
function failed(e) {
  if (e instanceof ApiError && e.loginRefused) {
    forget();
    showLogin(e.reason || e.error);
    return;
  }
  const box = $('message');
  box.className = 'error';
  box.textContent = describe(e);
  box.hidden = false;
}

function notice(text) {
  const box = $('message');
  box.className = 'notice';
  box.textContent = text;
  box.hidden = false;
}

/** Asks in the page's own dialog (never window.confirm); resolves to {ok, reason}. */
function confirm(text, okLabel, withReason) {
  const dialog = $('confirm');
  $('confirm-text').textContent = text;
  $('confirm-ok').textContent = okLabel;
  $('confirm-reason-label').hidden = !withReason;
  $('confirm-reason').value = '';
  return new Promise((resolve) => {
    const done = (ok) => {
      $('confirm-ok').onclick = null;
      $('confirm-cancel').onclick = null;
      dialog.onclose = null;
      dialog.close();
      resolve({ ok, reason: $('confirm-reason').value });
    };
    $('confirm-ok').onclick = () => done(true);
    $('confirm-cancel').onclick = () => done(false);
    dialog.onclose = () => done(false);
    dialog.showModal();
  });
}

/** Runs a user's action: errors are shown, never lost. */
async function act(action) {
  $('message').hidden = true;
  try {
    await action();
  } catch (e) {
    failed(e);
  }
}

function go(hash, text) {
  carried = text || null;
  if (location.hash === hash) {
    route();
  } else {
    location.hash = hash;
  }
}

const app = { confirm, act, notice, failed, go };

/** The page of a hash: [nav entry, builder]. */
function page(hash) {
  const parts = hash.replace(/^#\/?/, '').split('/').filter((p) => p !== '');
  try {
    const decoded = parts.map(decodeURIComponent);
    if (decoded.length === 0) {
      return ['overview', (main) => overview(main, app)];
    }
    if (decoded[0] === 'queues' && decoded.length === 1) {
      return ['queues', (main) => queues(main, app)];
    }
    if (decoded[0] === 'queues' && decoded.length === 3) {
      return ['queues', (main) => queue(main, app, decoded[1], decoded[2])];
    }
    if (decoded[0] === 'exchanges' && decoded.length === 1) {
      return ['exchanges', (main) => exchanges(main, app)];
    }
    if (decoded[0] === 'connections' && decoded.length === 1) {
      return ['connections', (main) => connections(main, app)];
    }
  } catch (e) {
    // a malformed percent-encoding: no such page
  }
  return [null, (main) => {
    main.append(el('h1', {}, 'Not found'), el('p', {}, 'There is no page ', el('code', {}, hash), '.'));
    return { async refresh() {} };
  }];
}

function route() {
  const mine = ++generation;
  clearTimeout(timer);
  $('message').hidden = true;
  if (carried) {
    notice(carried);
    carried = null;
  }
  const [nav, build] = page(location.hash);
  for (const link of document.querySelectorAll('nav a')) {
    if (link.dataset.route === nav) {
      link.setAttribute('aria-current', 'page');
    } else {
      link.removeAttribute('aria-current');
    }
  }
  const main = $('page');
  main.replaceChildren();
  main.dataset.page = nav || 'none';
  const shown = build(main);
  const tick = async () => {
    if (document.hidden) {
      paused = mine === generation;
      return;
    }
    try {
      await shown.refresh();
      if (mine === generation) {
        main.dataset.refreshed = String(Date.now());
      }
    } catch (e) {
      if (mine === generation) {
        failed(e);
      }
    }
    if (mine === generation) {
      timer = setTimeout(tick, refreshMillis());
    }
  };
  poll = tick;
  paused = false;
  tick();
}

function start(me) {
  $('login').hidden = true;
  $('top').hidden = false;
  $('page').hidden = false;
  $('who').textContent = `${me.name}${me.tags && me.tags.length ? ` (${me.tags.join(', ')})` : ''}`;
  route();
}

async function login(event) {
  event.preventDefault();
  remember($('login-user').value, $('login-password').value);
  try {
    start(await call('GET', '/api/whoami'));
  } catch (e) {
    forget();
    showLogin(describeLogin(e));
  }
}

function describeLogin(e) {
  return e instanceof ApiError ? (e.reason || e.error || `HTTP ${e.status}`) : (e.message || String(e));
}

async function init() {
  const saved = localStorage.getItem(REFRESH);
  if (saved && [...$('refresh').options].some((o) => o.value === saved)) {
    $('refresh').value = saved;
  }
  $('refresh').addEventListener('change', () => {
    localStorage.setItem(REFRESH, $('refresh').value);
    if (!$('page').hidden) {
      route();
    }
  });
  $('login-form').addEventListener('submit', login);
  $('logout').addEventListener('click', () => {
    forget();
    showLogin(null);
  });
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden && paused && !$('page').hidden) {
      paused = false;
      poll();
    }
  });
  window.addEventListener('hashchange', () => {
    if (!$('page').hidden) {
      route();
    }
  });
  if (!loggedIn()) {
    showLogin(null);
    return;
  }
  try {
    start(await call('GET', '/api/whoami'));
  } catch (e) {
    forget();
    showLogin(describeLogin(e));
  }
}

init();
