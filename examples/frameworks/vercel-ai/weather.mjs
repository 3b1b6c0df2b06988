// The Vercel AI SDK's tool loop against a running `callgate serve`.
//
//   callgate serve --script examples/frameworks/weather_openai.json --port 8765 &
//   CALLGATE_URL=http://127.0.0.1:8765 node weather.mjs openai
//
// (`anthropic` with weather_anthropic.json, `google` with weather_gemini.json.)
// Needs: npm install (package.json pins the versions this was checked with).
import { generateText, stepCountIs, tool } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { z } from "zod";

const url = process.env.CALLGATE_URL ?? "http://127.0.0.1:8765";
const models = {
  // The AI SDK wants the version segment in every base URL.
  openai: () => createOpenAI({ baseURL: `${url}/openai/v1`, apiKey: "test" }).responses("gpt-4.1"),
  anthropic: () =>
    createAnthropic({ baseURL: `${url}/anthropic/v1`, apiKey: "test" })("claude-sonnet-4-5"),
  google: () =>
    createGoogleGenerativeAI({ baseURL: `${url}/gemini/v1beta`, apiKey: "test" })("gemini-2.5-flash"),
};

const { text } = await generateText({
  model: models[process.argv[2] ?? "openai"](),
  tools: {
    get_weather: tool({
      description: "The weather in a city.",
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => "sunny",
    }),
  },
  stopWhen: stepCountIs(3),
  prompt: "What is the weather in Paris?",
});
console.log(text);
