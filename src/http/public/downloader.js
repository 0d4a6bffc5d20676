/*
 * The download page's downloader (no build step, no inline script: the page's CSP allows only this
 * file). Without it the page still works: every file is a plain link.
 *
 * "Download" fetches each file with a progress bar, resuming with a Range request (If-Range on the
 * ETag) when the connection drops, saves it through a Blob, and at the end tells the service that
 * the session is complete (download-complete), which marks the link used. It also reveals the
 * license key's copy button.
 */
/* global document, window, fetch, Blob, navigator */
'use strict';

// The license key's copy button: shown only here, where it can work.
(function () {
  var key = document.getElementById('license-key');
  var copy = document.getElementById('copy-license-key');
  var status = document.getElementById('license-key-status');
  if (!key || !copy || !status) return;
  copy.hidden = false;

  function selectKey() {
    var range = document.createRange();
    range.selectNodeContents(key);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  copy.addEventListener('click', function () {
    var copied = function () { status.textContent = 'License key copied.'; };
    // Without the clipboard API (plain http), the key is selected for the reader's own copy.
    var selected = function () {
      selectKey();
      status.textContent = document.execCommand && document.execCommand('copy') ? 'License key copied.' : 'License key selected: copy it now.';
    };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(key.textContent).then(copied, selected);
    else selected();
  });
})();

(function () {
  var root = document.getElementById('downloader');
  var button = document.getElementById('download-all');
  if (!root || !button || !window.fetch || !window.ReadableStream || !window.URL || !URL.createObjectURL) return;

  var actions = root.querySelector('[data-js-only]');
  var overall = document.getElementById('overall-progress');
  var status = document.getElementById('download-status');
  var rows = Array.prototype.slice.call(root.querySelectorAll('.file'));
  var MAX_ATTEMPTS = 6;

  actions.hidden = false;

  function say(message) {
    status.textContent = message;
  }

  function percent(done, total) {
    return total > 0 ? Math.min(100, Math.floor((done / total) * 100)) : 100;
  }

  function wait(ms) {
    return new Promise(function (resolve) { setTimeout(resolve, ms); });
  }

  /** A failure that retrying cannot fix (the link expired or was used meanwhile). */
  function Final(message) {
    this.message = message;
  }

  /**
   * The whole file's length as this answer states it (a 206's Content-Range, a plain 200's
   * Content-Length), or null. It can differ from the page's size: a stamped PDF is a copy of its own.
   */
  function statedLength(response) {
    var range = /\/(\d+)$/.exec(response.headers.get('Content-Range') || '');
    if (response.status === 206 && range) return Number(range[1]);
    var length = response.headers.get('Content-Length');
    if (response.status === 200 && length !== null && !response.headers.get('Content-Encoding')) return Number(length);
    return null;
  }

  /** Fetches one file, resuming after network failures; resolves with its Blob. */
  async function fetchFile(url, size, onBytes) {
    var chunks = [];
    var received = 0;
    var etag = null;
    var total = size;
    for (var attempt = 1; ; attempt += 1) {
      try {
        var headers = {};
        if (received > 0) {
          headers.Range = 'bytes=' + received + '-';
          if (etag) headers['If-Range'] = etag;
        }
        var response = await fetch(url, { headers: headers, cache: 'no-store', credentials: 'same-origin' });
        if (response.status === 404 || response.status === 410) {
          throw new Final('This link can no longer be used. Please reload the page.');
        }
        if (response.status === 200 && received > 0) {
          // The server sent the whole file again (it changed, or ignored the range): start over.
          chunks = [];
          received = 0;
          onBytes(0);
        } else if (response.status !== 200 && response.status !== 206) {
          throw new Error('HTTP ' + response.status);
        }
        etag = response.headers.get('ETag') || etag;
        var stated = statedLength(response);
        if (stated !== null) total = stated;
        var reader = response.body.getReader();
        for (;;) {
          var step = await reader.read();
          if (step.done) break;
          chunks.push(step.value);
          received += step.value.byteLength;
          onBytes(received);
        }
        if (received >= total) return new Blob(chunks, { type: response.headers.get('Content-Type') || 'application/octet-stream' });
        throw new Error('the connection closed early');
      } catch (error) {
        if (error instanceof Final || attempt >= MAX_ATTEMPTS) throw error;
        say('Connection interrupted, resuming…');
        await wait(Math.min(15000, 1000 * Math.pow(2, attempt - 1)));
      }
    }
  }

  function save(blob, name) {
    var href = URL.createObjectURL(blob);
    var link = document.createElement('a');
    link.href = href;
    link.download = name;
    link.hidden = true;
    document.body.appendChild(link);
    link.click();
    link.remove();
    // Give the browser time to start writing the file before the memory is released.
    setTimeout(function () { URL.revokeObjectURL(href); }, 60000);
  }

  async function complete() {
    var response = await fetch(root.getAttribute('data-complete-url'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token: root.getAttribute('data-token') }),
      credentials: 'same-origin',
    });
    if (!response.ok) throw new Error('HTTP ' + response.status);
  }

  button.addEventListener('click', async function () {
    button.disabled = true;
    var total = rows.reduce(function (sum, row) { return sum + Number(row.getAttribute('data-file-size')); }, 0);
    var before = 0;
    overall.hidden = false;
    overall.value = 0;
    try {
      for (var i = 0; i < rows.length; i += 1) {
        var row = rows[i];
        var name = row.getAttribute('data-file-name');
        var size = Number(row.getAttribute('data-file-size'));
        // Tried again after a failure: a file already saved is not fetched (and counted) again.
        if (row.classList.contains('done')) {
          before += size;
          continue;
        }
        var bar = row.querySelector('.file-progress');
        bar.hidden = false;
        var label = rows.length > 1 ? 'Downloading ' + name + ' (' + (i + 1) + ' of ' + rows.length + ')' : 'Downloading ' + name;
        say(label + '… 0%');
        var blob = await fetchFile(row.getAttribute('data-file-url'), size, function (bytes) {
          bar.value = percent(bytes, size);
          overall.value = percent(before + bytes, total);
          say(label + '… ' + percent(bytes, size) + '%');
        });
        bar.value = 100;
        before += size;
        overall.value = percent(before, total);
        save(blob, name);
        row.classList.add('done');
      }
      overall.value = 100;
      await complete();
      say(rows.length > 1 ? 'All files are downloaded.' : 'Your file is downloaded.');
      root.classList.add('complete');
    } catch (error) {
      button.disabled = false;
      say('The download stopped: ' + (error && error.message ? error.message : 'unknown error') +
        '. You can try again, or use the links above.');
    }
  });
})();
