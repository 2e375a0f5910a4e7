// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Loaded by Deopt in a class loader of its own, compiled, unloaded. */
public class Gone {
	public static int spin(int n)
	{
		int h = 0;

		for (int i = 0; i < n; i++)
			h = h * 31 + i;
		return h;
	}
}
