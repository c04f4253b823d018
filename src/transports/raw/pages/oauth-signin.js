// The sign-in page of an OAuth authorization: signs in through POST /dashboard/signin (which sets the session
// cookie), then loads the same authorization URL again, which now shows the consent page.
'use strict';
(function () {
  var $ = function (id) { return document.getElementById(id); };

  function fail(message) {
    $('submit').disabled = false;
    $('error').textContent = message;
  }

  $('signin').addEventListener('submit', function (e) {
    e.preventDefault();
    $('submit').disabled = true;
    $('error').textContent = '';
    fetch('/dashboard/signin', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: $('email').value, password: $('password').value }),
      credentials: 'same-origin',
    }).then(function (res) {
      if (res.ok) return location.reload();
      return res.json().catch(function () { return {}; }).then(function (json) {
        fail((json.error && json.error.message) || 'Signing in failed (' + res.status + ').');
      });
    }, function () { fail('The platform could not be reached.'); });
  });
})();
