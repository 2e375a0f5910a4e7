// SPDX-License-Identifier: GPL-2.0
// Two hot methods for the end-to-end tests: Hot.Alpha costs about twice as
// much per call as Hot.Beta. Runs for SECONDS (first argument, default 3),
// prints one line and exits.
//
//   mcs -out:Hot.exe Hot.cs && MONO_ENV_OPTIONS=--jitmap mono Hot.exe 3

using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;

public static class Hot
{
	[MethodImpl(MethodImplOptions.NoInlining)]
	public static int Alpha(int n)
	{
		int x = n;
		for (int i = 0; i < 2000; i++)
			x = unchecked(x * 1103515245 + 12345 + i);
		return x;
	}

	[MethodImpl(MethodImplOptions.NoInlining)]
	public static int Beta(int n)
	{
		int x = n;
		for (int i = 0; i < 1000; i++)
			x = unchecked(x * 22695477 + 1 + i);
		return x;
	}

	public static int Main(string[] args)
	{
		double seconds = 3;
		if (args.Length > 0 &&
		    (!double.TryParse(args[0], System.Globalization.NumberStyles.Float,
				      System.Globalization.CultureInfo.InvariantCulture,
				      out seconds) || !(seconds > 0))) {
			Console.Error.WriteLine("usage: mono Hot.exe [SECONDS]");
			return 2;
		}

		Stopwatch clock = Stopwatch.StartNew();
		long limit = (long)(seconds * 1000);
		int acc = 0;
		long calls = 0;
		while (clock.ElapsedMilliseconds < limit) {
			for (int k = 0; k < 100; k++) {
				acc ^= Alpha(acc + k);
				acc ^= Beta(acc - k);
			}
			calls += 100;
		}
		Console.WriteLine("Hot.exe: {0} calls each of Hot.Alpha and Hot.Beta, acc {1}",
				  calls, acc);
		return 0;
	}
}
