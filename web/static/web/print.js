// The verification page's "print certificate" button (no inline script: CSP).
document.addEventListener("click", (event) => {
  if (event.target.closest("[data-print]")) window.print();
});
