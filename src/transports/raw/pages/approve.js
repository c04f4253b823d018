// The approval page: a person, signed in (their session cookie) or holding their substrate key, decides on one proposed
// action through the same REST routes every client uses (GET, then POST .../approve or .../reject under
// /v1/me/substrate/actions/).
'use strict';
(function () {
  var KEY = 'svc_substrate_key';
  var actionId = decodeURIComponent(location.pathname.split('/').pop() || '');
  var $ = function (id) { return document.getElementById(id); };
  var api = '/v1/me/substrate/actions/' + encodeURIComponent(actionId);

  function show(id, visible) { $(id).hidden = !visible; }
  function fail(message) { $('error').textContent = message; }

  function call(method, path, body) {
    var headers = {};
    var key = sessionStorage.getItem(KEY);
    // A key, when the person gave one, is their credential; otherwise the session cookie is (same origin only).
    if (key) headers.authorization = 'Bearer ' + key;
    if (body) headers['content-type'] = 'application/json';
    return fetch(path, { method: method, headers: headers, body: body ? JSON.stringify(body) : undefined, credentials: 'same-origin' }).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (json) { return { status: res.status, json: json }; });
    });
  }

  function signIn(message) {
    sessionStorage.removeItem(KEY);
    show('action', false);
    show('signin', true);
    fail(message || '');
  }

  function render(action) {
    $('capability').textContent = action.capability;
    $('proposer').textContent = (action.proposer_kind === 'agent' ? 'an agent' : 'a person') +
      (action.source_app_id ? ' (app ' + action.source_app_id + ')' : '') + (action.source_rule_id ? ' (rule ' + action.source_rule_id + ')' : '');
    var conflicts = (action.verdict && action.verdict.conflicts) || [];
    // The policy's reason, and each principle that held the action back by its title.
    $('reason').textContent = ((action.verdict && action.verdict.reason) || '') +
      (conflicts.length ? ' (principles: ' + conflicts.map(function (c) { return c.title; }).join('; ') + ')' : '');
    $('created').textContent = action.created_at;
    $('status').textContent = action.status + (action.reject_reason ? ': ' + action.reject_reason : '');
    $('payload').textContent = JSON.stringify(action.payload, null, 2);
    show('decide', action.status === 'proposed');
    show('signin', false);
    show('action', true);
  }

  function load() {
    fail('');
    call('GET', api).then(function (r) {
      if (r.status === 401) return signIn(sessionStorage.getItem(KEY) ? 'That key was refused.' : '');
      if (r.status === 403) return signIn('Refused: ' + ((r.json.error && r.json.error.message) || r.status));
      if (r.status !== 200) return fail((r.json.error && r.json.error.message) || 'The action could not be read (' + r.status + ').');
      render(r.json);
    }, function () { fail('The platform could not be reached.'); });
  }

  function decide(verb) {
    var body = verb === 'reject' && $('reject-reason').value ? { reason: $('reject-reason').value } : {};
    $('approve').disabled = $('reject').disabled = true;
    call('POST', api + '/' + verb, body).then(function (r) {
      $('approve').disabled = $('reject').disabled = false;
      if (r.status !== 200) return fail((r.json.error && r.json.error.message) || 'The decision failed (' + r.status + ').');
      render(r.json);
      $('outcome').textContent = verb === 'approve' ? 'Approved: the action ran. You can close this tab.' : 'Rejected. You can close this tab.';
    }, function () {
      $('approve').disabled = $('reject').disabled = false;
      fail('The platform could not be reached.');
    });
  }

  $('person').addEventListener('submit', function (e) {
    e.preventDefault();
    sessionStorage.removeItem(KEY);
    call('POST', '/dashboard/signin', { email: $('email').value.trim(), password: $('password').value }).then(function (r) {
      $('password').value = '';
      if (r.status !== 200) return fail((r.json.error && r.json.error.message) || 'Sign-in failed (' + r.status + ').');
      load();
    }, function () { fail('The platform could not be reached.'); });
  });
  $('bykey').addEventListener('submit', function (e) {
    e.preventDefault();
    sessionStorage.setItem(KEY, $('key').value.trim());
    $('key').value = '';
    load();
  });
  $('approve').addEventListener('click', function () { decide('approve'); });
  $('reject').addEventListener('click', function () { decide('reject'); });
  // Signed in already (or holding a key in this tab): straight to the action; otherwise the sign-in forms.
  load();
})();
