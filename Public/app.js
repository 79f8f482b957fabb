// Ferry's browser page: plain modern JavaScript, no build step, no dependencies.
//
// How it stays live (docs/API.md, "Events"): list every job with GET /api/v1/jobs (following the
// `next` cursor), keep the first page's `Ferry-Event-Id`, then open ONE EventSource on
// /api/v1/events?lastEventId=<that id>. The server replays whatever happened after the list, and on
// its own reconnects the browser sends Last-Event-ID, so no change is lost. Rows are keyed by job id
// (a Map id → row elements) and updated in place; changes are batched into one
// requestAnimationFrame, so hundreds of jobs stay smooth.
'use strict';

(() => {
  const API = '/api/v1';
  const STATE_LABELS = {
    waiting: 'Waiting',
    downloading: 'Downloading',
    delivering: 'Delivering',
    paused: 'Paused',
    finished: 'Finished',
    failed: 'Failed',
    cancelled: 'Cancelled',
  };
  const CAN = {
    pause: new Set(['waiting', 'downloading', 'delivering']),
    resume: new Set(['paused', 'failed']),
    cancel: new Set(['waiting', 'downloading', 'delivering', 'paused', 'failed']),
  };
  const ACTIVE = new Set(['waiting', 'downloading', 'delivering']);
  const PROGRESS_FIELDS = ['bytesReceived', 'bytesExpected', 'progress', 'speed', 'eta'];
  // A `progress` event with `phase: "delivering"` carries the upload's numbers (docs/API.md, "Onward delivery").
  const DELIVERY_PROGRESS_FIELDS = ['bytesSent', 'bytesTotal', 'progress', 'speed', 'eta'];
  const DELIVERY_STATES = {
    pending: 'waits for the download',
    sending: 'sending',
    delivered: 'delivered',
    failed: 'failed',
  };

  const $ = (id) => document.getElementById(id);
  const ui = {
    loading: $('loading'),
    notice: $('notice'),
    connection: $('connection'),
    connectionText: $('connection-text'),
    logout: $('logout'),
    readOnly: $('read-only'),
    login: $('login'),
    loginForm: $('login-form'),
    token: $('token'),
    loginError: $('login-error'),
    app: $('app'),
    addSection: $('add'),
    settingsForm: $('settings-form'),
    maxSpeed: $('max-speed'),
    maxConcurrent: $('max-concurrent'),
    settingsSave: $('settings-save'),
    keys: $('keys'),
    keyForm: $('key-form'),
    keyName: $('key-name'),
    keyScope: $('key-scope'),
    keyMaxActive: $('key-max-active'),
    keyError: $('key-error'),
    keyToken: $('key-token'),
    keyTokenValue: $('key-token-value'),
    keyList: $('key-list'),
    settingsError: $('settings-error'),
    settingsStatus: $('settings-status'),
    addForm: $('add-form'),
    url: $('url'),
    filename: $('filename'),
    sha256: $('sha256'),
    checksumAlgorithm: $('checksum-algorithm'),
    deliverUrl: $('deliver-url'),
    deliverMethod: $('deliver-method'),
    addError: $('add-error'),
    addStatus: $('add-status'),
    batch: $('batch'),
    batchForm: $('batch-form'),
    batchUrls: $('batch-urls'),
    batchError: $('batch-error'),
    list: $('jobs'),
    empty: $('empty'),
    filter: $('filter'),
    search: $('search'),
    tagFilter: $('tag-filter'),
    tagFilterName: $('tag-filter-name'),
    tagFilterClear: $('tag-filter-clear'),
    tags: $('tags'),
    heading: $('jobs-heading'),
    totalActive: $('total-active'),
    totalWaiting: $('total-waiting'),
    totalSpeed: $('total-speed'),
    template: $('job-template'),
  };

  /** id → the latest job object we know. */
  const jobs = new Map();
  /** id → { li, name, ... } the row's elements and what they last showed. */
  const rows = new Map();
  /** ids whose rows need drawing on the next frame. */
  const dirty = new Set();
  /** ids this page deleted, ignored until the server's `removed` event (or a re-list) confirms. */
  const tombstones = new Set();
  /** "id action" of row actions waiting for their answer. */
  const inFlight = new Set();

  let mode = null;            // 'open' (no token configured) or 'session' (logged in with a cookie)
  let readOnly = false;       // logged in with the read-only token: nothing may be changed
  let source = null;          // the one EventSource
  let generation = 0;         // bumps on every (re)connect, so stale async work drops out
  let frame = 0;              // pending animation frame (or timer) id
  let frameIsTimer = false;
  let reconnectTimer = 0;
  let reconnectDelay = 1000;
  let noticeTimer = 0;
  let filter = '';
  // Tag and search filters are answered by the server (GET /api/v1/jobs?tag=&q=, from its index): `matching`
  // holds the ids it listed for them, refreshed after changes; null while none is set or the answer is awaited.
  let tagFilter = '';
  let search = '';
  let matching = null;
  let matchingGen = 0;
  let matchingTimer = 0;
  let totalsShown = '';
  let listed = false;         // the first full list has arrived (until then the list says it is loading)

  // MARK: API

  class ApiError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  /** A request to the API. State-changing ones carry the CSRF header and a JSON content type. */
  async function api(method, path, body, { credentials = 'same-origin', authRedirect = true } = {}) {
    const init = { method, credentials, headers: { Accept: 'application/json' } };
    if (method !== 'GET' && method !== 'HEAD') {
      init.headers['X-Requested-With'] = 'ferry';
      init.headers['Content-Type'] = 'application/json';
      if (body !== undefined) init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(API + path, init);
    } catch {
      throw new ApiError(0, 'network', 'Ferry could not be reached. Is it running?');
    }
    if (response.ok) return response;
    const error = await errorFrom(response);
    if (response.status === 401 && authRedirect && mode === 'session') sessionEnded();
    throw error;
  }

  /** The API's `{"error": {"code", "message"}}`, or a sentence from the status line. */
  async function errorFrom(response) {
    let code = 'http_' + response.status;
    let message = `The server answered ${response.status} ${response.statusText}`.trim() + '.';
    try {
      const body = await response.json();
      if (body && body.error) {
        if (typeof body.error.code === 'string') code = body.error.code;
        if (typeof body.error.message === 'string' && body.error.message) message = body.error.message;
      }
    } catch { /* not JSON */ }
    return new ApiError(response.status, code, message);
  }

  const jobPath = (id, suffix = '') => `/jobs/${encodeURIComponent(id)}${suffix}`;

  // MARK: Start-up and sessions

  /** Open server (GET /jobs answers without credentials), logged in (the cookie works), or login. */
  async function boot() {
    clearTimeout(reconnectTimer);
    try {
      const anonymous = await api('GET', '/jobs?limit=1', undefined, { credentials: 'omit', authRedirect: false });
      void anonymous;
      await startApp('open');
    } catch (error) {
      if (error.status === 401) {
        try {
          await api('GET', '/jobs?limit=1', undefined, { authRedirect: false });
          await startApp('session');
        } catch (inner) {
          if (inner.status === 401) showLogin();
          else bootFailed(inner);
        }
      } else {
        bootFailed(error);
      }
    }
  }

  function bootFailed(error) {
    ui.loading.hidden = false;
    ui.loading.textContent = 'Ferry is not answering yet; trying again…';
    showNotice(error.message);
    reconnectTimer = setTimeout(boot, nextDelay());
  }

  async function startApp(newMode) {
    mode = newMode;
    // Known before the app shows, so a read-only login never sees controls it may not use.
    if (mode === 'session') await loadAccess();
    else setReadOnly(false);
    if (mode !== newMode) return; // logged out meanwhile
    loadSettings();
    ui.loading.hidden = true;
    ui.login.hidden = true;
    ui.app.hidden = false;
    ui.logout.hidden = mode !== 'session';
    ui.connection.hidden = false;
    hideNotice();
    totalsShown = '';
    updateTotals();
    connect();
  }

  function showLogin(message) {
    stopLive();
    clearJobs();
    mode = null;
    setReadOnly(false);
    ui.readOnly.hidden = true;
    listed = false;
    ui.loading.hidden = true;
    ui.app.hidden = true;
    ui.logout.hidden = true;
    ui.connection.hidden = true;
    ui.login.hidden = false;
    setFieldError(ui.loginError, message || '', ui.token);
    ui.token.focus();
  }

  function sessionEnded() {
    if (mode !== 'session') return;
    showLogin('Your session has ended. Log in again.');
  }

  ui.loginForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const token = ui.token.value.trim();
    if (!token) {
      setFieldError(ui.loginError, 'Enter the API token.', ui.token);
      ui.token.focus();
      return;
    }
    const button = ui.loginForm.querySelector('button[type=submit]');
    button.disabled = true;
    try {
      await api('POST', '/session', { token }, { authRedirect: false });
      ui.token.value = '';
      setFieldError(ui.loginError, '', ui.token);
      // The server might be open after all (then the login is a no-op): probe again.
      await boot();
      if (!ui.app.hidden) ui.url.focus();
    } catch (error) {
      const message = error.status === 401 ? 'That token is not valid.' : error.message;
      setFieldError(ui.loginError, message, ui.token);
      ui.token.focus();
    } finally {
      button.disabled = false;
    }
  });

  ui.logout.addEventListener('click', async () => {
    ui.logout.disabled = true;
    try {
      await api('DELETE', '/session', undefined, { authRedirect: false });
    } catch (error) {
      if (error.status !== 401) showNotice(`Could not log out: ${error.message}`);
    } finally {
      ui.logout.disabled = false;
    }
    showLogin();
  });

  // MARK: The live view

  /** List every job, then follow the event stream from the list's event id. */
  async function connect() {
    const gen = ++generation;
    clearTimeout(reconnectTimer);
    closeSource();
    setConnection('connecting');
    let eventId = null;
    let cursor = null;
    const seen = new Set();
    try {
      do {
        const query = new URLSearchParams({ limit: '500' });
        if (cursor) query.set('after', cursor);
        const response = await api('GET', '/jobs?' + query);
        if (gen !== generation) return;
        // The first page's id is the oldest: replaying from it covers every later page too.
        if (eventId === null) eventId = response.headers.get('Ferry-Event-Id') || '';
        const page = await response.json();
        if (gen !== generation) return;
        for (const job of page.jobs || []) {
          seen.add(job.id);
          upsert(job);
        }
        cursor = page.next || null;
      } while (cursor);
    } catch (error) {
      if (gen !== generation || error.status === 401) return;
      setConnection('offline');
      showNotice(`Could not load the downloads: ${error.message}`);
      scheduleReconnect();
      return;
    }
    // Whatever we still show that the server no longer lists has gone (e.g. after a `reset`).
    for (const id of jobs.keys()) if (!seen.has(id)) remove(id);
    for (const id of tombstones) if (!seen.has(id)) tombstones.delete(id);
    if (!listed) {
      listed = true;
      scheduleRender();
    }
    openSource(eventId, gen);
  }

  function openSource(eventId, gen) {
    const url = API + '/events' + (eventId ? '?lastEventId=' + encodeURIComponent(eventId) : '');
    const es = new EventSource(url);
    source = es;
    const mine = (handler) => (event) => {
      if (source !== es || gen !== generation) return;
      handler(event);
    };
    es.onopen = mine(() => {
      reconnectDelay = 1000;
      setConnection('live');
    });
    es.onerror = mine(() => {
      if (es.readyState === EventSource.CLOSED) {
        // The browser gave up (an HTTP error such as 401): find out why and start over.
        source = null;
        setConnection('offline');
        scheduleReconnect();
      } else {
        // The browser reconnects by itself, sending Last-Event-ID.
        setConnection('reconnecting');
      }
    });
    es.addEventListener('job', mine((event) => {
      const job = parse(event.data);
      if (job) upsert(job);
    }));
    es.addEventListener('progress', mine((event) => {
      const update = parse(event.data);
      if (update) applyProgress(update);
    }));
    es.addEventListener('removed', mine((event) => {
      const data = parse(event.data);
      if (!data || typeof data.id !== 'string') return;
      tombstones.delete(data.id);
      remove(data.id);
    }));
    es.addEventListener('reset', mine(() => {
      // The server cannot replay from where we were: list again and reopen.
      connect();
    }));
  }

  function closeSource() {
    if (source) source.close();
    source = null;
  }

  function stopLive() {
    generation++;
    clearTimeout(reconnectTimer);
    closeSource();
  }

  function nextDelay() {
    const delay = reconnectDelay;
    reconnectDelay = Math.min(reconnectDelay * 2, 15000);
    return delay;
  }

  /** After the stream failed for good: check the session, then list and reopen. */
  function scheduleReconnect() {
    clearTimeout(reconnectTimer);
    const gen = generation;
    reconnectTimer = setTimeout(async () => {
      if (gen !== generation) return;
      try {
        await api('GET', '/jobs?limit=1');
      } catch (error) {
        if (error.status === 401) return; // the login form is showing
        setConnection('offline');
        scheduleReconnect();
        return;
      }
      if (gen === generation) connect();
    }, nextDelay());
  }

  function setConnection(state) {
    const text = {
      connecting: 'Connecting…',
      live: 'Live',
      reconnecting: 'Reconnecting…',
      offline: 'Offline, retrying…',
    }[state];
    if (ui.connection.dataset.state === state) return;
    ui.connection.dataset.state = state;
    ui.connectionText.textContent = text;
    if (!listed) scheduleRender(); // the list's placeholder says whether it is loading or retrying
  }

  function parse(text) {
    try {
      return JSON.parse(text);
    } catch {
      return null;
    }
  }

  // MARK: The model (changes are drawn on the next frame)

  function upsert(job) {
    if (!job || typeof job.id !== 'string' || tombstones.has(job.id)) return;
    const old = jobs.get(job.id);
    const next = Object.assign({}, job);
    if (job.restarted === true) next.restartedFromZero = true;
    else if (old && old.restartedFromZero && old.state === job.state && job.state === 'downloading') next.restartedFromZero = true;
    delete next.restarted;
    jobs.set(job.id, next);
    markDirty(job.id);
    scheduleMatching();
  }

  function applyProgress(update) {
    const job = jobs.get(update.id);
    if (!job) return;
    if (update.phase === 'delivering') {
      const delivery = Object.assign({}, job.delivery || {});
      for (const field of DELIVERY_PROGRESS_FIELDS) if (field in update) delivery[field] = update[field];
      if (!delivery.state || delivery.state === 'pending') delivery.state = 'sending';
      job.delivery = delivery;
    } else {
      for (const field of PROGRESS_FIELDS) if (field in update) job[field] = update[field];
    }
    markDirty(update.id);
  }

  function remove(id) {
    if (!jobs.has(id) && !rows.has(id)) return;
    jobs.delete(id);
    markDirty(id);
    scheduleMatching();
  }

  function clearJobs() {
    for (const id of jobs.keys()) dirty.add(id);
    jobs.clear();
    tombstones.clear();
    scheduleRender();
  }

  function markDirty(id) {
    dirty.add(id);
    scheduleRender();
  }

  function scheduleRender() {
    if (frame) return;
    // Animation frames pause in a background tab; a timer keeps the model drawn there too.
    frameIsTimer = document.hidden;
    frame = frameIsTimer ? setTimeout(render, 250) : requestAnimationFrame(render);
  }

  // MARK: Drawing

  function render() {
    frame = 0;
    for (const id of dirty) {
      const job = jobs.get(id);
      let row = rows.get(id);
      if (!job) {
        if (row) removeRow(row);
        continue;
      }
      if (!row) {
        row = createRow(job);
        rows.set(id, row);
        placeRow(row);
      }
      updateRow(row, job);
    }
    dirty.clear();
    updateTotals();
  }

  let rowSerial = 0;

  function createRow(job) {
    const li = ui.template.content.firstElementChild.cloneNode(true);
    const q = (selector) => li.querySelector(selector);
    const nameId = `job-name-${++rowSerial}`;
    li.dataset.id = job.id;
    const row = {
      id: job.id,
      createdAt: job.createdAt || '',
      li,
      name: q('.name'),
      host: q('.host'),
      badge: q('.badge'),
      restarted: q('.restarted'),
      tags: q('.tags'),
      progress: q('progress'),
      bytes: q('.bytes'),
      speed: q('.speed'),
      eta: q('.eta'),
      error: q('.job-error'),
      sources: q('.sources'),
      delivery: q('.delivery'),
      deliveryHost: q('.delivery-host'),
      deliveryState: q('.delivery-state'),
      deliveryProgress: q('.delivery-progress'),
      deliveryBytes: q('.delivery-bytes'),
      deliverySpeed: q('.delivery-speed'),
      deliveryEta: q('.delivery-eta'),
      pause: q('[data-action=pause]'),
      resume: q('[data-action=resume]'),
      retry: q('[data-action=retry]'),
      cancel: q('[data-action=cancel]'),
      download: q('[data-action=download]'),
      remove: q('[data-action=delete]'),
      shown: {},
    };
    row.name.id = nameId;
    row.progress.setAttribute('aria-labelledby', nameId);
    row.progress.setAttribute('aria-describedby', `${nameId}-bytes`);
    row.bytes.id = `${nameId}-bytes`;
    row.deliveryHost.id = `${nameId}-target`;
    row.deliveryBytes.id = `${nameId}-sent`;
    row.deliveryProgress.setAttribute('aria-labelledby', `${nameId} ${nameId}-target`);
    row.deliveryProgress.setAttribute('aria-describedby', `${nameId}-sent`);
    for (const control of [row.pause, row.resume, row.retry, row.cancel, row.download, row.remove]) {
      control.setAttribute('aria-describedby', nameId);
    }
    return row;
  }

  /** Newest first. New jobs are nearly always the newest, so this is usually a prepend. */
  function placeRow(row) {
    let before = ui.list.firstElementChild;
    while (before) {
      const other = rows.get(before.dataset.id);
      if (!other || compareRows(row, other) <= 0) break;
      before = before.nextElementSibling;
    }
    ui.list.insertBefore(row.li, before);
  }

  /** Negative when `a` (a new row) goes above `b`; a batch's jobs share a time, the later-seen goes first. */
  function compareRows(a, b) {
    if (a.createdAt !== b.createdAt) return a.createdAt > b.createdAt ? -1 : 1;
    return -1;
  }

  function removeRow(row) {
    const hadFocus = row.li.contains(document.activeElement);
    const next = row.li.nextElementSibling || row.li.previousElementSibling;
    row.li.remove();
    rows.delete(row.id);
    if (hadFocus) {
      const target = next && firstVisibleControl(next);
      (target || ui.heading).focus();
    }
  }

  function firstVisibleControl(li) {
    for (const control of li.querySelectorAll('.actions [data-action]')) {
      if (!control.hidden && !control.disabled) return control;
    }
    return null;
  }

  /** Sets a property only when it changes, so unchanged rows cost nothing. */
  function put(row, key, value, apply) {
    if (row.shown[key] === value) return;
    row.shown[key] = value;
    apply(value);
  }

  function updateRow(row, job) {
    const state = job.state;
    const address = job.finalUrl || job.url || '';
    const name = job.filename || lastSegment(address) || hostOf(address) || job.id;
    const active = ACTIVE.has(state);
    const focused = row.li.contains(document.activeElement) ? document.activeElement : null;

    put(row, 'state', state, (v) => { row.li.dataset.state = v; });
    put(row, 'name', name, (v) => { row.name.textContent = v; });
    put(row, 'url', job.url || '', (v) => { row.name.title = v; });
    put(row, 'host', hostOf(address), (v) => { row.host.textContent = v; });
    put(row, 'badge', STATE_LABELS[state] || state, (v) => {
      row.badge.textContent = v;
      row.badge.dataset.state = state;
    });
    put(row, 'restarted', !!job.restartedFromZero && state === 'downloading', (v) => { row.restarted.hidden = !v; });
    const tags = Array.isArray(job.tags) ? job.tags.filter((tag) => typeof tag === 'string') : [];
    put(row, 'tags', JSON.stringify([tags, tagFilter]), () => drawTags(row, tags));
    const sources = Array.isArray(job.sources) ? job.sources : [];
    put(row, 'sources', JSON.stringify(sources), () => drawSources(row, sources));

    // Progress: indeterminate (no value attribute) while the size is unknown.
    const expected = job.bytesExpected == null ? null : num(job.bytesExpected);
    // A checksum failure discards the bytes (the job then reports 0 received), but they were all received:
    // say so rather than "0 B of 50 MiB".
    const mismatch = state === 'failed' && job.error && job.error.code === 'checksum_mismatch';
    const received = mismatch ? Math.max(num(job.bytesReceived), expected || 0) : num(job.bytesReceived);
    // With a delivery, the download is complete once the job is delivering (or its delivery failed).
    const downloaded = !!job.delivery && (state === 'delivering' || (state === 'failed' && deliveryFailed(job)));
    let fraction = null;
    if (state === 'finished' || downloaded) fraction = 1;
    else if (expected !== null) fraction = expected > 0 ? Math.min(1, received / expected) : 0;
    const percent = fraction === null ? null : Math.floor(fraction * 100);
    put(row, 'fraction', fraction, (v) => {
      if (v === null) row.progress.removeAttribute('value');
      else row.progress.value = v;
    });
    put(row, 'percent', percent, (v) => {
      row.progress.textContent = v === null ? 'size unknown' : `${v}%`;
    });

    let bytesText;
    if (state === 'finished') bytesText = formatBytes(received || expected || 0);
    else if (downloaded) bytesText = `${formatBytes(received || expected || 0)} downloaded`;
    else if (mismatch) {
      const algorithm = checksumName(job);
      bytesText = received > 0 ? `${formatBytes(received)} received, ${algorithm} did not match` : `${algorithm} did not match`;
    }
    else if (expected !== null) bytesText = `${formatBytes(received)} of ${formatBytes(expected)} (${percent}%)`;
    else bytesText = received > 0 ? `${formatBytes(received)} of unknown size` : 'size unknown';
    put(row, 'bytes', bytesText, (v) => { row.bytes.textContent = v; });

    const speedText = state === 'downloading' ? `${formatBytes(num(job.speed))}/s` : '';
    put(row, 'speed', speedText, (v) => { row.speed.textContent = v; row.speed.hidden = !v; });
    const etaText = state === 'downloading' && job.eta != null ? `${formatDuration(job.eta)} left` : '';
    put(row, 'eta', etaText, (v) => { row.eta.textContent = v; row.eta.hidden = !v; });

    const error = job.error && (state === 'failed' || state === 'waiting' || state === 'delivering') ? job.error : null;
    const errorText = error ? errorSentence(error) : '';
    put(row, 'error', errorText, (v) => {
      row.error.textContent = v;
      row.error.hidden = !v;
      row.error.dataset.kind = state === 'failed' ? 'failed' : 'waiting';
    });

    if (state === 'finished' && job.delivery && job.delivery.state === 'delivered') checkLocalCopy(job);
    updateDelivery(row, job);

    // A failed delivery is retried with resume (the file is not downloaded again): the button says so.
    const retryDelivery = state === 'failed' && deliveryFailed(job);
    const localCopy = fileGone.has(job.id) ? 'gone' : 'kept';
    put(row, 'actions', `${state}|${retryDelivery}|${localCopy}`, () => {
      row.pause.hidden = !CAN.pause.has(state);
      row.resume.hidden = !CAN.resume.has(state) || retryDelivery;
      row.retry.hidden = !retryDelivery;
      row.cancel.hidden = !CAN.cancel.has(state);
      row.download.hidden = state !== 'finished' || localCopy === 'gone';
    });
    put(row, 'href', state === 'finished' ? job.contentUrl || '' : '', (v) => {
      if (v) row.download.href = v;
      else row.download.removeAttribute('href');
    });
    put(row, 'filtered', !matchesFilter(job), (v) => { row.li.hidden = v; });
    put(row, 'active', active, (v) => { row.li.classList.toggle('is-active', v); });

    // Keep keyboard focus in the row when the focused action just disappeared (Pause → Resume).
    if (focused && focused.hidden) {
      const target = firstVisibleControl(row.li);
      if (target) target.focus();
    }
  }

  /** The upload bar under the download bar, for a job with `delivery`: target host, state, bytes sent, speed, time left. */
  function updateDelivery(row, job) {
    const delivery = job.delivery && typeof job.delivery === 'object' ? job.delivery : null;
    put(row, 'hasDelivery', !!delivery, (v) => {
      row.delivery.hidden = !v;
      row.li.classList.toggle('has-delivery', v);
    });
    if (!delivery) return;
    const dstate = typeof delivery.state === 'string' ? delivery.state : 'pending';
    const sending = job.state === 'delivering' && dstate === 'sending';
    put(row, 'deliveryHost', hostOf(delivery.url || '') || delivery.url || '', (v) => { row.deliveryHost.textContent = v; });
    put(row, 'deliveryUrl', delivery.url || '', (v) => { row.delivery.title = `${delivery.method || 'PUT'} ${v}`; });
    let stateText = DELIVERY_STATES[dstate] || dstate;
    if (job.state === 'delivering' && job.error && job.error.code === 'retrying') stateText = 'retrying';
    else if (job.state === 'paused' && dstate !== 'delivered') stateText = dstate === 'pending' ? stateText : 'paused';
    put(row, 'deliveryState', `${dstate}|${stateText}`, () => {
      row.deliveryState.textContent = stateText;
      row.deliveryState.dataset.state = dstate;
      row.delivery.dataset.state = dstate;
    });

    const total = delivery.bytesTotal == null ? null : num(delivery.bytesTotal);
    const sent = num(delivery.bytesSent);
    let fraction = null;
    if (dstate === 'delivered') fraction = 1;
    else if (total !== null) fraction = total > 0 ? Math.min(1, sent / total) : 0;
    else if (typeof delivery.progress === 'number') fraction = Math.min(1, Math.max(0, delivery.progress));
    else if (dstate === 'pending') fraction = 0;
    put(row, 'deliveryFraction', fraction, (v) => {
      if (v === null) row.deliveryProgress.removeAttribute('value');
      else row.deliveryProgress.value = v;
    });
    const percent = fraction === null ? null : Math.floor(fraction * 100);
    put(row, 'deliveryPercent', percent, (v) => {
      row.deliveryProgress.textContent = v === null ? 'size unknown' : `${v}%`;
    });
    let bytesText;
    if (dstate === 'delivered') bytesText = `${formatBytes(total || sent)} sent`;
    else if (dstate === 'pending' && sent === 0) bytesText = total ? `${formatBytes(total)} to send` : 'not started';
    else if (total !== null) bytesText = `${formatBytes(sent)} of ${formatBytes(total)} sent (${percent}%)`;
    else bytesText = `${formatBytes(sent)} sent`;
    if (fileGone.has(job.id)) bytesText += ' · local copy removed';
    put(row, 'deliveryBytes', bytesText, (v) => { row.deliveryBytes.textContent = v; });
    const speedText = sending ? `${formatBytes(num(delivery.speed))}/s` : '';
    put(row, 'deliverySpeed', speedText, (v) => { row.deliverySpeed.textContent = v; row.deliverySpeed.hidden = !v; });
    const etaText = sending && delivery.eta != null ? `${formatDuration(delivery.eta)} left` : '';
    put(row, 'deliveryEta', etaText, (v) => { row.deliveryEta.textContent = v; row.deliveryEta.hidden = !v; });
  }

  function deliveryFailed(job) {
    return !!job.delivery && ((job.error && job.error.code === 'delivery_failed') || job.delivery.state === 'failed');
  }

  // A delivered job created with `deleteAfter` has no local copy any more (its content answers 410 gone): its
  // delivery's `deleteAfter` says so (a server that leaves it out is asked once per job, HEAD content), and the
  // Download button goes.
  const fileGone = new Set();
  const copyChecked = new Set();

  async function checkLocalCopy(job) {
    if (copyChecked.has(job.id) || !job.contentUrl) return;
    copyChecked.add(job.id);
    // The server says whether the delivery removes the copy (`deleteAfter`); ask only when it does not say.
    if (job.delivery.deleteAfter === false) return;
    if (job.delivery.deleteAfter === true) {
      fileGone.add(job.id); // known while the row is being drawn: nothing to redraw
      return;
    }
    try {
      const response = await fetch(job.contentUrl, { method: 'HEAD', credentials: 'same-origin' });
      if (response.status === 410) {
        fileGone.add(job.id);
        markDirty(job.id);
      }
    } catch { /* the button stays; a click will say what happened */ }
  }

  /** The name of the digest a job was checked against: its checksum's algorithm (SHA-512, MD5, …), else SHA-256. */
  function checksumName(job) {
    const algorithm = job.checksum && typeof job.checksum.algorithm === 'string' ? job.checksum.algorithm : 'sha-256';
    return algorithm.toUpperCase();
  }

  function errorSentence(error) {
    let text = error.message || error.code || 'Unknown error';
    if (error.httpStatus && !String(text).includes(String(error.httpStatus))) text = `HTTP ${error.httpStatus}: ${text}`;
    return text;
  }

  function updateTotals() {
    let downloading = 0;
    let waiting = 0;
    let speed = 0;
    let visible = 0;
    for (const job of jobs.values()) {
      if (job.state === 'downloading') {
        downloading++;
        speed += num(job.speed);
      } else if (job.state === 'delivering') {
        downloading++;
        speed += job.delivery ? num(job.delivery.speed) : 0;
      } else if (job.state === 'waiting') {
        waiting++;
      }
      if (matchesFilter(job)) visible++;
    }
    const speedText = `${formatBytes(speed)}/s`;
    const key = `${downloading}|${waiting}|${speedText}|${visible}|${jobs.size}|${filter}|${tagFilter}|${search}|${matching === null}|${listed}|${ui.connection.dataset.state}`;
    if (key === totalsShown) return;
    totalsShown = key;
    ui.totalActive.textContent = String(downloading);
    ui.totalWaiting.textContent = String(waiting);
    ui.totalSpeed.textContent = speedText;
    ui.list.setAttribute('aria-busy', String(!listed));
    ui.empty.dataset.kind = !listed && jobs.size === 0 ? 'loading' : 'empty';
    if (!listed && jobs.size === 0) {
      ui.empty.textContent = ui.connection.dataset.state === 'offline'
        ? 'Could not load the downloads yet; retrying…' : 'Loading downloads…';
      ui.empty.hidden = false;
    } else if (jobs.size === 0) {
      ui.empty.textContent = 'No downloads yet. Add a URL above.';
      ui.empty.hidden = false;
    } else if (visible === 0 && serverFiltered() && matching === null) {
      ui.empty.textContent = 'Searching…';
      ui.empty.hidden = false;
    } else if (visible === 0) {
      ui.empty.textContent = 'No downloads match this filter.';
      ui.empty.hidden = false;
    } else {
      ui.empty.hidden = true;
    }
    document.title = downloading > 0 ? `Ferry · ${downloading} active · ${speedText}` : 'Ferry';
  }

  function matchesFilter(job) {
    const state = job.state;
    if (filter === 'active' && !ACTIVE.has(state)) return false;
    if (filter && filter !== 'active' && state !== filter) return false;
    if (!serverFiltered()) return true;
    return matching !== null && matching.has(job.id);
  }

  ui.filter.addEventListener('change', () => {
    filter = ui.filter.value;
    for (const id of jobs.keys()) dirty.add(id);
    scheduleRender();
  });

  // MARK: Tag and search filters (answered by the server)

  const serverFiltered = () => tagFilter !== '' || search !== '';

  /** The job's tags as chips; a click shows only that tag's downloads. */
  function drawTags(row, tags) {
    const chips = [...new Set(tags)].map((tag) => {
      const item = document.createElement('li');
      const chip = document.createElement('button');
      chip.type = 'button';
      chip.className = 'tag-chip';
      chip.dataset.tag = tag;
      chip.textContent = tag;
      chip.title = `Show only downloads tagged ${tag}`;
      chip.setAttribute('aria-pressed', String(tag === tagFilter));
      item.append(chip);
      return item;
    });
    row.tags.replaceChildren(...chips);
    row.tags.hidden = chips.length === 0;
  }

  // A job with mirrors: each source's host, the bytes it gave, and why it was dropped (docs/API.md, "Mirrors").
  function drawSources(row, sources) {
    const items = sources.map((source) => {
      const item = document.createElement('li');
      const dropped = source.state === 'dropped';
      item.dataset.state = dropped ? 'dropped' : 'active';
      item.title = source.url || '';
      const host = document.createElement('span');
      host.className = 'source-host';
      host.textContent = source.url || '';
      let text = ` · ${formatBytes(num(source.bytesReceived))}`;
      if (dropped) text += ` · dropped${source.error ? `: ${errorSentence(source.error)}` : ''}`;
      item.append(host, text);
      return item;
    });
    row.sources.replaceChildren(...items);
    row.sources.hidden = items.length === 0;
  }

  function setTagFilter(tag) {
    tagFilter = tag;
    ui.tagFilterName.textContent = tag;
    ui.tagFilter.hidden = !tag;
    filtersChanged();
  }

  function filtersChanged() {
    matching = null;
    for (const id of jobs.keys()) dirty.add(id);
    scheduleRender();
    refreshMatching();
  }

  /** Asks the server which jobs pass the tag and search filters (every page), then redraws. */
  async function refreshMatching() {
    clearTimeout(matchingTimer);
    matchingTimer = 0;
    const gen = ++matchingGen;
    if (!serverFiltered()) return;
    const ids = new Set();
    let cursor = null;
    try {
      do {
        const query = new URLSearchParams({ limit: '1000' });
        if (tagFilter) query.set('tag', tagFilter);
        if (search) query.set('q', search);
        if (cursor) query.set('after', cursor);
        const response = await api('GET', '/jobs?' + query);
        const page = await response.json();
        if (gen !== matchingGen) return;
        for (const job of page.jobs || []) ids.add(job.id);
        cursor = page.next || null;
      } while (cursor);
    } catch (error) {
      if (gen !== matchingGen || error.status === 401) return;
      showNotice(`Could not filter the downloads: ${error.message}`);
      return;
    }
    matching = ids;
    for (const id of jobs.keys()) dirty.add(id);
    scheduleRender();
  }

  /** After a job changed or went: ask again soon (a new name or tag may now match). */
  function scheduleMatching() {
    if (!serverFiltered()) return;
    clearTimeout(matchingTimer);
    matchingTimer = setTimeout(refreshMatching, 300);
  }

  let searchTimer = 0;
  ui.search.addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => {
      const text = ui.search.value.trim();
      if (text === search) return;
      search = text;
      filtersChanged();
    }, 250);
  });

  ui.list.addEventListener('click', (event) => {
    const chip = event.target.closest('button[data-tag]');
    if (!chip || !ui.list.contains(chip)) return;
    setTagFilter(chip.dataset.tag === tagFilter ? '' : chip.dataset.tag);
  });

  ui.tagFilterClear.addEventListener('click', () => {
    setTagFilter('');
    ui.heading.focus();
  });

  // MARK: Row actions (one delegated listener for every row)

  ui.list.addEventListener('click', async (event) => {
    const button = event.target.closest('button[data-action]');
    if (!button || !ui.list.contains(button)) return;
    const li = button.closest('li[data-id]');
    if (!li) return;
    const id = li.dataset.id;
    const action = button.dataset.action;
    const job = jobs.get(id);
    const name = job ? job.filename || lastSegment(job.url || '') || id : id;
    // Not `disabled`: that would drop keyboard focus. Repeated presses wait for the first.
    const key = `${id} ${action}`;
    if (inFlight.has(key)) return;
    inFlight.add(key);
    button.setAttribute('aria-busy', 'true');
    try {
      if (action === 'delete') {
        await api('DELETE', jobPath(id));
        if (jobs.has(id)) {
          tombstones.add(id);
          remove(id);
        }
        announce(`Deleted ${name}.`);
      } else {
        // Retrying a failed delivery is a resume: the server sends the file again without downloading it.
        const response = await api('POST', jobPath(id, '/' + (action === 'retry' ? 'resume' : action)));
        const updated = await response.json();
        // Events carry every change; use the answer only when the stream is down.
        if (!source || source.readyState !== EventSource.OPEN) upsert(updated);
      }
    } catch (error) {
      if (error.status === 404) remove(id);
      if (error.status !== 401) showNotice(`Could not ${action} ${name}: ${error.message}`);
    } finally {
      inFlight.delete(key);
      button.removeAttribute('aria-busy');
    }
  });

  // MARK: Adding jobs

  /** Hex digits of each checksum algorithm the API takes. */
  const CHECKSUM_DIGITS = { 'sha-256': 64, 'sha-512': 128, 'sha-1': 40, md5: 32 };

  ui.addForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    setFieldError(ui.addError, '');
    for (const input of [ui.url, ui.filename, ui.sha256, ui.tags, ui.deliverUrl]) input.removeAttribute('aria-invalid');
    const url = ui.url.value.trim();
    if (!url) return fieldProblem(ui.url, 'Enter the URL to download.');
    const body = { url };
    const filename = ui.filename.value.trim();
    if (filename) body.filename = filename;
    const sha = ui.sha256.value.trim();
    if (sha) {
      const algorithm = ui.checksumAlgorithm.value in CHECKSUM_DIGITS ? ui.checksumAlgorithm.value : 'sha-256';
      const digits = CHECKSUM_DIGITS[algorithm];
      const name = algorithm.toUpperCase();
      if (!/^[0-9a-fA-F]+$/.test(sha)) return fieldProblem(ui.sha256, `The ${name} must be hexadecimal digits (0-9, a-f).`);
      if (sha.length !== digits) return fieldProblem(ui.sha256, `The ${name} must be ${digits} hexadecimal digits, not ${sha.length}.`);
      if (algorithm === 'sha-256') body.sha256 = sha.toLowerCase();
      else body.checksum = { algorithm, value: sha.toLowerCase() };
    }
    const tags = ui.tags.value.split(',').map((tag) => tag.trim()).filter(Boolean);
    if (tags.length) body.tags = tags;
    const deliverUrl = ui.deliverUrl.value.trim();
    if (deliverUrl) {
      if (!/^https?:\/\/[^\s]+$/i.test(deliverUrl)) return fieldProblem(ui.deliverUrl, 'Deliver to must be an http or https URL.');
      body.deliver = { url: deliverUrl, method: ui.deliverMethod.value === 'POST' ? 'POST' : 'PUT' };
    }
    const button = ui.addForm.querySelector('button[type=submit]');
    button.disabled = true;
    try {
      const response = await api('POST', '/jobs', body);
      const job = await response.json();
      if (!jobs.has(job.id)) upsert(job);
      const name = job.filename || lastSegment(job.url) || job.url;
      announce(response.status === 200 ? `Already in the list: ${name}.` : `Added ${name}.`);
      ui.addForm.reset();
      ui.url.focus();
    } catch (error) {
      if (error.status === 401) return;
      const field = (body.deliver && /deliver/i.test(error.message) ? ui.deliverUrl : undefined)
        || { invalid_url: ui.url, unsupported_scheme: ui.url, forbidden_destination: ui.url }[error.code]
        || (error.code === 'invalid_request' && error.message.startsWith("'tags") ? ui.tags : undefined)
        || (error.code === 'invalid_request' && /^'(sha256|checksum)/.test(error.message) ? ui.sha256 : undefined);
      fieldProblem(field || ui.url, error.message, field ? undefined : false);
    } finally {
      button.disabled = false;
    }
  });

  /** Shows a problem under the add form; marks and focuses the field unless `mark` is false. */
  function fieldProblem(input, message, mark = true) {
    setFieldError(ui.addError, message, mark ? input : null);
    input.focus();
  }

  ui.batchForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    setFieldError(ui.batchError, '', ui.batchUrls);
    const lines = ui.batchUrls.value.split(/\r?\n/).map((line) => line.trim()).filter((line) => line && !line.startsWith('#'));
    if (lines.length === 0) {
      setFieldError(ui.batchError, 'Paste at least one URL, one per line.', ui.batchUrls);
      ui.batchUrls.focus();
      return;
    }
    const button = ui.batchForm.querySelector('button[type=submit]');
    button.disabled = true;
    try {
      const response = await api('POST', '/jobs', lines.map((url) => ({ url })));
      const answers = await response.json();
      const refused = [];
      let added = 0;
      answers.forEach((item, index) => {
        if (item && item.error) refused.push({ url: lines[index], error: item.error });
        else if (item && item.id) {
          added++;
          if (!jobs.has(item.id)) upsert(item);
        }
      });
      // Keep only the refused lines, so they can be fixed and sent again.
      ui.batchUrls.value = refused.map((item) => item.url).join('\n');
      if (refused.length) {
        setFieldError(ui.batchError, '', ui.batchUrls);
        const intro = document.createElement('p');
        intro.textContent = `${refused.length} of ${lines.length} refused (left in the box above):`;
        const list = document.createElement('ul');
        for (const item of refused) {
          const entry = document.createElement('li');
          const code = document.createElement('code');
          code.textContent = item.url;
          entry.append(code, ` ${item.error.message || item.error.code}`);
          list.append(entry);
        }
        ui.batchError.replaceChildren(intro, list);
        ui.batchError.hidden = false;
        ui.batchUrls.setAttribute('aria-invalid', 'true');
      }
      announce(`Added ${added} ${added === 1 ? 'download' : 'downloads'}.`);
    } catch (error) {
      if (error.status === 401) return;
      setFieldError(ui.batchError, error.message, ui.batchUrls);
      ui.batchUrls.focus();
    } finally {
      button.disabled = false;
    }
  });

  // MARK: Access and settings

  /** Asks the server what this login may do (GET /api/v1/session) and shows the matching view. */
  async function loadAccess() {
    try {
      const response = await api('GET', '/session', undefined, { authRedirect: false });
      const body = await response.json();
      setReadOnly(body.access === 'read-only');
      showKeysPanel(body.managesKeys === true);
      // A client's key (read or write) sees the settings but only the administrator changes them.
      if (body.key != null && body.managesKeys !== true) {
        ui.maxSpeed.disabled = true;
        ui.maxConcurrent.disabled = true;
        ui.settingsSave.hidden = true;
      }
    } catch (error) {
      setReadOnly(false); // the API refuses what this login may not do anyway
      showKeysPanel(false);
    }
  }

  // MARK: API keys (the administrator's panel)

  function showKeysPanel(value) {
    ui.keys.hidden = !value;
    if (value) loadKeys();
  }

  async function loadKeys() {
    try {
      const response = await api('GET', '/keys');
      renderKeys((await response.json()).keys);
    } catch (error) {
      if (error.status !== 401) setFieldError(ui.keyError, `Could not load the keys: ${error.message}`);
    }
  }

  /** One item per key: its name, scope and limits, a field for its jobs at once, Save and Revoke. */
  function renderKeys(keys) {
    ui.keyList.replaceChildren(...keys.map((key) => {
      const item = document.createElement('li');
      item.dataset.id = key.id;
      const label = document.createElement('span');
      label.className = 'key-label';
      const limit = key.limits.maxActiveJobs == null ? 'no limit' : `${key.limits.maxActiveJobs} at once`;
      const used = key.lastUsedAt ? `last used ${new Date(key.lastUsedAt).toLocaleString()}` : 'never used';
      label.textContent = `${key.name} (${key.scope}), ${limit}, ${used}`;
      const input = document.createElement('input');
      input.type = 'number';
      input.min = '0';
      input.className = 'key-max-active';
      input.setAttribute('aria-label', `Jobs at once for ${key.name}`);
      input.value = key.limits.maxActiveJobs == null ? '' : String(key.limits.maxActiveJobs);
      const save = document.createElement('button');
      save.type = 'button';
      save.className = 'button key-save';
      save.textContent = 'Save';
      save.addEventListener('click', () => changeKey(key.id, input.value));
      const revoke = document.createElement('button');
      revoke.type = 'button';
      revoke.className = 'button danger key-revoke';
      revoke.textContent = 'Revoke';
      revoke.addEventListener('click', () => revokeKey(key.id));
      item.append(label, input, save, revoke);
      return item;
    }));
  }

  /** The limit field's value: null for empty, a whole number of 0 or more, undefined when unreadable. */
  function parseLimit(text) {
    if (text.trim() === '') return null;
    const value = Number(text);
    return Number.isInteger(value) && value >= 0 ? value : undefined;
  }

  async function changeKey(id, text) {
    const limit = parseLimit(text);
    if (limit === undefined) { setFieldError(ui.keyError, 'Jobs at once must be a whole number of 0 or more, or empty.'); return; }
    try {
      await api('PATCH', `/keys/${encodeURIComponent(id)}`, { limits: { maxActiveJobs: limit } });
      setFieldError(ui.keyError, '');
      await loadKeys();
    } catch (error) {
      if (error.status !== 401) setFieldError(ui.keyError, error.message);
    }
  }

  async function revokeKey(id) {
    try {
      await api('DELETE', `/keys/${encodeURIComponent(id)}`);
      await loadKeys();
    } catch (error) {
      if (error.status !== 401) setFieldError(ui.keyError, error.message);
    }
  }

  ui.keyForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    setFieldError(ui.keyError, '', ui.keyName);
    const name = ui.keyName.value.trim();
    if (!name) { setFieldError(ui.keyError, 'Give the key a name.', ui.keyName); ui.keyName.focus(); return; }
    const limit = parseLimit(ui.keyMaxActive.value);
    if (limit === undefined) { setFieldError(ui.keyError, 'Jobs at once must be a whole number of 0 or more, or empty.', ui.keyMaxActive); return; }
    try {
      const response = await api('POST', '/keys', { name, scope: ui.keyScope.value, limits: { maxActiveJobs: limit } });
      const key = await response.json();
      ui.keyTokenValue.textContent = key.token;
      ui.keyToken.hidden = false;
      ui.keyForm.reset();
      await loadKeys();
    } catch (error) {
      if (error.status !== 401) setFieldError(ui.keyError, error.message);
    }
  });

  /** The read-only view: no add form, no job actions (CSS, `body.read-only`), settings shown but not changeable. */
  function setReadOnly(value) {
    readOnly = value;
    document.body.classList.toggle('read-only', value);
    ui.readOnly.hidden = !value;
    ui.addSection.hidden = value;
    ui.maxSpeed.disabled = value;
    ui.maxConcurrent.disabled = value;
    ui.settingsSave.hidden = value;
  }

  async function loadSettings() {
    try {
      const response = await api('GET', '/settings');
      showSettings(await response.json());
    } catch (error) {
      if (error.status !== 401) ui.settingsStatus.textContent = `Could not load the settings: ${error.message}`;
    }
  }

  function showSettings(settings, prefix = '') {
    ui.maxSpeed.value = settings.maxBytesPerSecond == null ? '' : speedInput(settings.maxBytesPerSecond);
    ui.maxConcurrent.value = String(settings.maxConcurrent);
    const limit = settings.maxBytesPerSecond == null ? 'no speed limit' : `at most ${formatBytes(settings.maxBytesPerSecond)}/s`;
    ui.settingsStatus.textContent = `${prefix}In force: ${limit}, ${settings.maxConcurrent} at once.`;
  }

  const SPEED_UNITS = [['GiB', 1 << 30], ['MiB', 1 << 20], ['KiB', 1024], ['G', 1e9], ['M', 1e6], ['K', 1e3]];

  /** A speed as the field shows it: exact, in the largest unit that divides it (2097152 → "2MiB"). */
  function speedInput(bytes) {
    for (const [unit, size] of SPEED_UNITS) if (bytes % size === 0) return `${bytes / size}${unit}`;
    return String(bytes);
  }

  /** Bytes per second from the field (`500K`, `10MiB`, `1.5M`, `2MiB/s`, `1048576`); null when empty; undefined when unreadable. */
  function parseSpeed(text) {
    const value = text.trim();
    if (!value || /^none$/i.test(value)) return null;
    const match = /^(\d+(?:\.\d+)?)\s*([KMG]i?)?B?(?:\/s)?$/i.exec(value);
    if (!match) return undefined;
    const unit = match[2] ? match[2][0].toUpperCase() + (match[2].length > 1 ? 'iB' : '') : '';
    const size = unit ? SPEED_UNITS.find(([name]) => name === unit)[1] : 1;
    const bytes = Math.round(Number(match[1]) * size);
    return bytes >= 1 && Number.isSafeInteger(bytes) ? bytes : undefined;
  }

  ui.settingsForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (readOnly) return;
    setFieldError(ui.settingsError, '', ui.maxSpeed);
    ui.maxConcurrent.removeAttribute('aria-invalid');
    const speed = parseSpeed(ui.maxSpeed.value);
    if (speed === undefined) {
      setFieldError(ui.settingsError, 'Give the speed limit in bytes per second, e.g. 500K or 10MiB, or leave it empty for none.', ui.maxSpeed);
      ui.maxSpeed.focus();
      return;
    }
    const concurrent = Number(ui.maxConcurrent.value);
    if (!Number.isInteger(concurrent) || concurrent < 1 || concurrent > 1024) {
      setFieldError(ui.settingsError, 'Downloads at once must be a whole number from 1 to 1024.', ui.maxConcurrent);
      ui.maxConcurrent.focus();
      return;
    }
    ui.settingsSave.disabled = true;
    try {
      const response = await api('PATCH', '/settings', { maxBytesPerSecond: speed, maxConcurrent: concurrent });
      showSettings(await response.json(), 'Saved. ');
    } catch (error) {
      if (error.status !== 401) setFieldError(ui.settingsError, error.message);
    } finally {
      ui.settingsSave.disabled = false;
    }
  });

  // MARK: Messages

  function setFieldError(element, message, input) {
    element.textContent = message;
    element.hidden = !message;
    if (input) {
      if (message) input.setAttribute('aria-invalid', 'true');
      else input.removeAttribute('aria-invalid');
      if (message) input.setAttribute('aria-errormessage', element.id);
    }
  }

  function showNotice(message) {
    clearTimeout(noticeTimer);
    ui.notice.textContent = message;
    ui.notice.hidden = false;
    noticeTimer = setTimeout(hideNotice, 10000);
  }

  function hideNotice() {
    clearTimeout(noticeTimer);
    ui.notice.hidden = true;
    ui.notice.textContent = '';
  }

  function announce(message) {
    ui.addStatus.textContent = message;
  }

  // MARK: Formatting

  function num(value) {
    return typeof value === 'number' && Number.isFinite(value) ? value : 0;
  }

  const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

  function formatBytes(bytes) {
    let value = Math.max(0, bytes);
    let unit = 0;
    while (value >= 1024 && unit < UNITS.length - 1) {
      value /= 1024;
      unit++;
    }
    if (unit === 0) return `${Math.round(value)} B`;
    return `${value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : Math.round(value)} ${UNITS[unit]}`;
  }

  function formatDuration(seconds) {
    const s = Math.max(0, Math.round(seconds));
    if (s < 60) return `${s} s`;
    const m = Math.floor(s / 60);
    if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s`;
    const h = Math.floor(m / 60);
    if (h < 48) return `${h} h ${String(m % 60).padStart(2, '0')} min`;
    return `${Math.floor(h / 24)} d ${h % 24} h`;
  }

  function hostOf(address) {
    try {
      return new URL(address).host;
    } catch {
      return '';
    }
  }

  function lastSegment(address) {
    try {
      const segments = new URL(address).pathname.split('/').filter(Boolean);
      const last = segments.length ? segments[segments.length - 1] : '';
      try {
        return decodeURIComponent(last);
      } catch {
        return last;
      }
    } catch {
      return '';
    }
  }

  document.addEventListener('visibilitychange', () => {
    if (!document.hidden && frame && frameIsTimer) {
      clearTimeout(frame);
      frame = 0;
      scheduleRender();
    }
  });

  boot();
})();
