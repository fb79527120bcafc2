// Decoy's mark: a decoy duck afloat, in a rounded square. The same drawing
// is the favicon (favicon.svg) and README's logo (docs/logo.svg); here its
// colours are the theme's (--logo-bg, --logo-fg), so it turns with the
// page's scheme.

export const DUCK = 'M12.2 6.2C14.8 6.2 16.7 8.1 16.7 10.6C16.7 11.9 16.1 13 15.3 13.8C16.9 14.3 18.9 14.4 20.9 14C23.3 13.5 25.2 12.3 26.5 10.8C27.1 14 26.8 17.3 24.9 19.5C23.2 21.5 20.6 22.5 17.5 22.5H11.2C8 22.5 5.7 20.5 5.7 17.8C5.7 15.9 6.7 14.4 8.4 13.6C7.9 13 7.6 12.4 7.5 11.8C6.2 12 4.6 11.8 3.9 11C3.6 10.6 3.9 10 4.6 9.9C5.6 9.8 6.7 9.7 7.7 9.4C8.2 7.5 10 6.2 12.2 6.2Z';
export const WAVE = 'M4.5 26.2q2.9-1.8 5.8 0t5.8 0 5.8 0 5.8 0';

/** Logo is the mark, decorative: the text beside it names the page. */
export function Logo() {
  return (
    <svg class="logo" viewBox="0 0 32 32" aria-hidden="true" focusable="false">
      <rect class="logo-bg" width="32" height="32" rx="7" />
      <path class="logo-fg" d={DUCK} />
      <circle class="logo-bg" cx="12.7" cy="9.6" r="1.1" />
      <path class="logo-wave" d={WAVE} />
    </svg>
  );
}
