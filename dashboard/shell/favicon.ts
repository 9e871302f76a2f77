/** The dashboard's icon (a shield over a GPU card), served as SVG for /favicon.svg and /favicon.ico. */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<path d="M16 2 4 7v8c0 7.5 5.1 13.4 12 15 6.9-1.6 12-7.5 12-15V7z" fill="#14202e"/>
<rect x="9" y="12" width="14" height="9" rx="1.5" fill="#ffbf47"/>
<rect x="11" y="14" width="3" height="5" fill="#14202e"/><rect x="15.5" y="14" width="3" height="5" fill="#14202e"/>
</svg>`;
