// The Vercel AI SDK's `google()` provider (Gemini generateContent, a Gemini 3 model) against
// a running `callgate serve`: two parallel calls, their results, the answer.
//
//   callgate serve --script examples/frameworks/weather_gemini_parallel.json --port 8765 &
//   CALLGATE_URL=http://127.0.0.1:8765 node weather_google.mjs          # generateText
//   CALLGATE_URL=http://127.0.0.1:8765 node weather_google.mjs stream   # streamText
//
// (restart the server, or POST /_callgate/reset, between the two runs.)
// Needs: npm install (package.json pins the versions this was checked with).
import { generateText, stepCountIs, streamText, tool } from "ai";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { z } from "zod";

const url = process.env.CALLGATE_URL ?? "http://127.0.0.1:8765";
const options = {
  // The AI SDK wants the version segment in the base URL.
  model: createGoogleGenerativeAI({ baseURL: `${url}/gemini/v1beta`, apiKey: "test" })(
    "gemini-3-flash-preview",
  ),
  tools: {
    get_weather: tool({
      description: "The weather in a city.",
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => `sunny in ${city}`,
    }),
  },
  stopWhen: stepCountIs(3),
  prompt: "What is the weather in Paris and in Rome?",
};

if (process.argv[2] === "stream") {
  const result = streamText(options);
  console.log(await result.text);
} else {
  console.log((await generateText(options)).text);
}
