// The local profile's catch-all route (serverless/local-profile.ts): what API Gateway answers a path no route matches,
// {"message":"Not Found"}, instead of serverless-offline's own 404, whose body echoes the path and with it the token.
export async function handler() {
  return { statusCode: 404, headers: { 'content-type': 'application/json' }, body: '{"message":"Not Found"}' };
}
