/* Small behaviours of the public pages, kept out of the HTML (the CSP allows no inline
   script): a <select data-autosubmit> submits its form when it changes. */
(function () {
  "use strict";
  document.addEventListener("change", function (event) {
    var field = event.target;
    if (field.matches && field.matches("select[data-autosubmit]") && field.form) {
      field.form.requestSubmit();
    }
  });
})();
