// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Hot SECONDS [ROUNDS]: spend SECONDS seconds ("-": until the standard
 * input ends), and at least ROUNDS rounds, in three methods, alpha, beta
 * and gamma, each a loop long enough to be compiled on its own (and
 * on-stack replaced), not only inlined into its caller. A count of rounds
 * keeps the share of compiled code the same on a slow machine. Prints
 * "pid PID" first, "done SINK" at the end. Hot SECONDS ROUNDS warm first
 * runs a round of Bench, through much of the JDK: many more methods live.
 */
public class Hot {
	static long alpha(long n)
	{
		long x = 1;

		for (long i = 0; i < n; i++)
			x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	static double beta(int n)
	{
		double s = 0;

		for (int i = 1; i <= n; i++)
			s += 1.0 / ((double)i * i);
		return s;
	}

	static int gamma(int[] a, int rounds)
	{
		int h = 0;

		for (int r = 0; r < rounds; r++)
			for (int i = 0; i < a.length; i++)
				h = 31 * h + (a[i] ^ r);
		return h;
	}

	/* With SECONDS "-": whether the standard input has ended. */
	static volatile boolean ended;

	public static void main(String[] args)
	{
		boolean input = args.length > 0 && args[0].equals("-");
		double seconds = args.length > 0 && !input ?
				 Double.parseDouble(args[0]) : 2;
		long rounds = args.length > 1 ? Long.parseLong(args[1]) : 0;
		long end = System.nanoTime() + (long)(seconds * 1e9);
		int[] a = new int[1024];
		long sink = 0;

		if (input) {
			Thread t = new Thread(() -> {
				try {
					while (System.in.read() >= 0)
						;
				} catch (java.io.IOException e) {
				}
				ended = true;
			});

			t.setDaemon(true);
			t.start();
		}

		for (int i = 0; i < a.length; i++)
			a[i] = i * 7;
		if (args.length > 2 && args[2].equals("warm"))
			Bench.main(new String[] { "1" });
		System.out.println("pid " + ProcessHandle.current().pid());
		System.out.flush();
		do {
			sink += alpha(200000);
			sink += (long)beta(200000);
			sink += gamma(a, 200);
		} while (--rounds > 0 ||
			 (input ? !ended : System.nanoTime() < end));
		System.out.println("done " + sink);
	}
}
