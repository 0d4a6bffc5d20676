// Dashboard behaviour that htmx does not cover: file uploads with a progress bar, forms that talk
// JSON to the REST API, copy buttons, confirmations. Plain script, no build step. Every request
// carries the session's CSRF token (the API asks for it when a session, not a key, is used).
/* global window, document, navigator, fetch, XMLHttpRequest, FormData, htmx */
'use strict';

(function () {
  function csrfToken() {
    return document.body.getAttribute('data-csrf') || '';
  }

  function statusArea(form) {
    return form.querySelector('[data-status]');
  }

  function say(form, text, isError) {
    var area = statusArea(form);
    if (!area) return;
    area.textContent = text;
    area.className = isError ? 'error' : 'ok';
    area.setAttribute('role', isError ? 'alert' : 'status');
    area.hidden = false;
  }

  function errorText(xhrStatus, body) {
    try {
      var parsed = JSON.parse(body);
      if (parsed && parsed.error) return parsed.error;
    } catch {
      // not JSON
    }
    return 'The request failed (HTTP ' + xhrStatus + ').';
  }

  // Uploads a version (multipart) to the API with XMLHttpRequest, whose upload events drive the bar.
  function upload(form) {
    var bar = form.querySelector('progress');
    var button = form.querySelector('button[type="submit"]');
    var xhr = new XMLHttpRequest();
    xhr.open('POST', form.getAttribute('action'));
    xhr.setRequestHeader('X-CSRF-Token', csrfToken());
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.upload.addEventListener('progress', function (event) {
      if (!event.lengthComputable || !bar) return;
      bar.max = event.total;
      bar.value = event.loaded;
      bar.textContent = Math.round((event.loaded / event.total) * 100) + ' %';
    });
    xhr.addEventListener('load', function () {
      if (button) button.disabled = false;
      if (xhr.status >= 200 && xhr.status < 300) {
        if (bar) bar.value = bar.max;
        say(form, form.getAttribute('data-done') || 'Uploaded.', false);
        window.setTimeout(function () { window.location.reload(); }, 400);
      } else {
        say(form, errorText(xhr.status, xhr.responseText), true);
      }
    });
    xhr.addEventListener('error', function () {
      if (button) button.disabled = false;
      say(form, 'The upload was interrupted. Check the connection and try again.', true);
    });
    if (button) button.disabled = true;
    if (bar) { bar.hidden = false; bar.removeAttribute('value'); }
    say(form, 'Uploading…', false);
    xhr.send(new FormData(form));
  }

  // The message of a form that succeeded: its `data-done`, where `{name}` is the answer's field of
  // that name and `{name:one|many}` the word that agrees with it ("{n} {n:sale is|sales are}").
  function doneText(form, fallback, text) {
    var answer = null;
    try { answer = JSON.parse(text); } catch { answer = null; }
    return (form.getAttribute('data-done') || fallback).replace(/\{(\w+)(?::([^|}]*)\|([^}]*))?\}/g, function (whole, name, one, many) {
      if (!answer || typeof answer !== 'object' || !Object.prototype.hasOwnProperty.call(answer, name)) return whole;
      if (one === undefined) return String(answer[name]);
      return answer[name] === 1 ? one : many;
    });
  }

  // A form whose fields are sent as a JSON object to the API (a field marked data-type="boolean" as
  // true or false; checkboxes marked data-type="list" as one array of the ticked values, [] when
  // none is). `data-show` names a field of the answer to show once (a new API key or secret);
  // otherwise the page reloads to show the new state.
  function sendJson(form) {
    var body = {};
    Array.prototype.forEach.call(form.elements, function (field) {
      if (field.name && field.getAttribute('data-type') === 'list') body[field.name] = [];
    });
    Array.prototype.forEach.call(form.elements, function (field) {
      if (!field.name || field.name === '_csrf' || field.value === '') return;
      if ((field.type === 'checkbox' || field.type === 'radio') && !field.checked) return;
      var type = field.getAttribute('data-type');
      if (type === 'list') body[field.name].push(field.value);
      else body[field.name] = type === 'boolean' ? field.value === 'true' : field.value;
    });
    callApi(form, 'application/json', JSON.stringify(body), function (text) {
      var show = form.getAttribute('data-show');
      var target = show && document.getElementById(form.getAttribute('data-show-in'));
      if (target) {
        target.textContent = JSON.parse(text)[show];
        var hiddenBox = target.closest('[hidden]');
        if (hiddenBox) hiddenBox.hidden = false;
        say(form, form.getAttribute('data-done') || 'Done.', false);
        return;
      }
      say(form, doneText(form, 'Saved.', text), false);
      window.setTimeout(function () { window.location.reload(); }, 400);
    });
  }

  // Sends the form's body to the API; its answer's text goes to `succeeded`, an error to the status
  // line. Settles once the answer is handled, whatever it was.
  function callApi(form, contentType, body, succeeded) {
    return fetch(form.getAttribute('action'), {
      method: form.getAttribute('data-method') || 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': contentType, 'Accept': 'application/json', 'X-CSRF-Token': csrfToken() },
      body: body,
    }).then(function (response) {
      return response.text().then(function (text) {
        if (!response.ok) { say(form, errorText(response.status, text), true); return; }
        succeeded(text);
      });
    }, function () {
      say(form, 'The request could not be sent. Check the connection and try again.', true);
    });
  }

  // A form whose textarea is sent as the text/plain body (license keys, one per line). The answer
  // stays on screen (no reload): the part named by `data-refresh` fetches itself again instead.
  function sendText(form) {
    var field = form.querySelector('textarea');
    var button = form.querySelector('button[type="submit"]');
    if (button) button.disabled = true;
    say(form, 'Sending…', false);
    callApi(form, 'text/plain; charset=utf-8', field.value, function (text) {
      say(form, doneText(form, 'Sent.', text), false);
      field.value = '';
      var part = document.getElementById(form.getAttribute('data-refresh') || '');
      if (part) htmx.trigger(part, 'refresh');
    }).then(function () { if (button) button.disabled = false; });
  }

  document.addEventListener('submit', function (event) {
    var form = event.target;
    var question = form.getAttribute('data-confirm');
    if (question && !window.confirm(question)) { event.preventDefault(); return; }
    if (form.hasAttribute('data-upload')) { event.preventDefault(); upload(form); }
    else if (form.hasAttribute('data-json')) { event.preventDefault(); sendJson(form); }
    else if (form.hasAttribute('data-text')) { event.preventDefault(); sendText(form); }
  });

  document.addEventListener('click', function (event) {
    var button = event.target.closest('[data-copy]');
    if (!button) return;
    var source = document.getElementById(button.getAttribute('data-copy'));
    var text = source ? (source.value !== undefined ? source.value : source.textContent) : '';
    var done = function () { button.textContent = 'Copied'; window.setTimeout(function () { button.textContent = 'Copy'; }, 1500); };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done);
    } else if (source && source.select) {
      source.select();
      document.execCommand('copy');
      done();
    }
  });

  // After a sale is recorded, the list it belongs to reloads (its refresher listens for "refresh").
  document.addEventListener('htmx:afterRequest', function (event) {
    var elt = event.detail.elt;
    if (!event.detail.successful || !elt.getAttribute) return;
    var list = document.getElementById(elt.getAttribute('data-refresh') || '');
    if (list) htmx.trigger(list, 'refresh');
  });

  // The manual purchase form: the new-customer fields only matter when "New customer" is chosen.
  document.addEventListener('change', function (event) {
    var select = event.target.closest('[data-toggles]');
    if (!select) return;
    var group = document.getElementById(select.getAttribute('data-toggles'));
    if (group) group.hidden = select.value !== 'new';
  });
})();
