// Apply the saved theme before the first paint (no light flash in dark mode). Loaded by
// index.html as a file: the server's Content-Security-Policy allows no inline script.
try {
  if (localStorage.getItem('theme') === 'dark') document.documentElement.classList.add('dark')
} catch (e) {}
