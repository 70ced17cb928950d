// `.sql` files are bundled as text (wrangler's default module rules; vitest.config.ts mirrors them).
declare module "*.sql" {
  const text: string;
  export default text;
}
